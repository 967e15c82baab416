"""MariaDB Connector/C (libmariadb, through ctypes) for the client scripts:
the library with the argument and result types of the calls they make, one
connection (mysql), check and connect on it, and query_row, the first row
of a text query.
"""
import ctypes

from steps import DB, HOST, PASSWORD, PORT, USER

lib = ctypes.CDLL("libmariadb.so.3")
lib.mysql_init.restype = ctypes.c_void_p
lib.mysql_init.argtypes = [ctypes.c_void_p]
lib.mysql_real_connect.restype = ctypes.c_void_p
lib.mysql_real_connect.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.c_char_p, ctypes.c_uint, ctypes.c_char_p, ctypes.c_ulong]
lib.mysql_query.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.mysql_store_result.restype = ctypes.c_void_p
lib.mysql_store_result.argtypes = [ctypes.c_void_p]
lib.mysql_num_fields.restype = ctypes.c_uint
lib.mysql_num_fields.argtypes = [ctypes.c_void_p]
lib.mysql_fetch_row.restype = ctypes.POINTER(ctypes.c_char_p)
lib.mysql_fetch_row.argtypes = [ctypes.c_void_p]
lib.mysql_free_result.argtypes = [ctypes.c_void_p]
lib.mysql_errno.restype = ctypes.c_uint
lib.mysql_errno.argtypes = [ctypes.c_void_p]
lib.mysql_error.restype = ctypes.c_char_p
lib.mysql_error.argtypes = [ctypes.c_void_p]


class MySQLError(Exception):
    """A Connector/C error; args[0] is its MySQL error number (steps.error_code)."""


mysql = lib.mysql_init(None)


def check(failed):
    if failed:
        raise MySQLError(lib.mysql_errno(mysql), lib.mysql_error(mysql).decode())


def connect():
    check(not lib.mysql_real_connect(mysql, HOST.encode(), USER.encode(), PASSWORD.encode(), DB.encode(), PORT, None, 0))
    return "connected"


def query_row(sql):
    """The first row of sql's result, its values as text (None for NULL), or None for no result set."""
    check(lib.mysql_query(mysql, sql.encode()))
    res = lib.mysql_store_result(mysql)
    if not res:
        check(lib.mysql_errno(mysql))
        return None
    row = lib.mysql_fetch_row(res)
    values = [row[i].decode() if row[i] is not None else None for i in range(lib.mysql_num_fields(res))] if row else None
    lib.mysql_free_result(res)
    return values
