"""MariaDB Connector/C (libmariadb, through ctypes): mysql_reset_connection, as
connection pools call it, and mysql_change_user, which dpproxy refuses.

Steps (see steps.py): connect; before (SET some session state, read it
back); reset; after (the same state read again); change_user; still_open.
"""
import ctypes

from connector_c import MySQLError, check, connect, lib, mysql, query_row as query
from steps import DB, PASSWORD, USER, step

lib.mysql_reset_connection.argtypes = [ctypes.c_void_p]
lib.mysql_change_user.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]


STATE = "SELECT CONNECTION_ID(), USER(), DATABASE(), @dp_epsilon, @u, @@sql_select_limit"


def before():
    query("SET @dp_epsilon = 0.5, @u = 'x', sql_select_limit = 1")
    query("PREPARE p FROM 'SELECT 1'")
    return query(STATE)


def after():
    state = query(STATE)
    try:
        query("EXECUTE p")
        prepared = "kept"
    except MySQLError:
        prepared = "gone"
    return f"{state} prepared {prepared}"


def change_user():
    check(lib.mysql_change_user(mysql, USER.encode(), PASSWORD.encode(), DB.encode()))
    return "changed"


if step("connect", connect):
    step("before", before)
    step("reset", lambda: (check(lib.mysql_reset_connection(mysql)), "done")[1])
    step("after", after)
    step("change_user", change_user)
    step("still_open", lambda: query("SELECT USER()"))
