"""MariaDB Connector/C (libmariadb, through ctypes): a prepared statement
executed with a read-only server-side cursor (STMT_ATTR_CURSOR_TYPE =
CURSOR_TYPE_READ_ONLY) whose rows come STMT_ATTR_PREFETCH_ROWS = 2 at a
time by COM_STMT_FETCH, as mysql_stmt_fetch() asks for them.

Steps (see steps.py): connect; before (dp_remaining_epsilon()); execute
(SET @dp_epsilon = 0.5, then execute the grouped aggregate with the
cursor: its column count); first (two rows fetched: the race keys);
between (dp_remaining_epsilon() by a text query while the cursor is
open, which a result set being streamed would not allow); rest (the
other rows' keys); again (mysql_stmt_reset, then the statement executed
and fetched again with its cursor: the number of rows).
"""
import ctypes

from connector_c import MySQLError, check, connect, lib, mysql, query_row
from steps import step

lib.mysql_stmt_init.restype = ctypes.c_void_p
lib.mysql_stmt_init.argtypes = [ctypes.c_void_p]
lib.mysql_stmt_prepare.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong]
lib.mysql_stmt_attr_set.restype = ctypes.c_char
lib.mysql_stmt_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
lib.mysql_stmt_execute.argtypes = [ctypes.c_void_p]
lib.mysql_stmt_field_count.restype = ctypes.c_uint
lib.mysql_stmt_field_count.argtypes = [ctypes.c_void_p]
lib.mysql_stmt_bind_result.restype = ctypes.c_char
lib.mysql_stmt_bind_result.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.mysql_stmt_fetch.argtypes = [ctypes.c_void_p]
lib.mysql_stmt_reset.restype = ctypes.c_char
lib.mysql_stmt_reset.argtypes = [ctypes.c_void_p]
lib.mysql_stmt_errno.restype = ctypes.c_uint
lib.mysql_stmt_errno.argtypes = [ctypes.c_void_p]
lib.mysql_stmt_error.restype = ctypes.c_char_p
lib.mysql_stmt_error.argtypes = [ctypes.c_void_p]

STMT_ATTR_CURSOR_TYPE, STMT_ATTR_PREFETCH_ROWS = 1, 2
CURSOR_TYPE_READ_ONLY = 1
MYSQL_TYPE_STRING = 254
MYSQL_NO_DATA = 100
AGGREGATE = "SELECT race, COUNT(*) AS n FROM pums GROUP BY race"


class Bind(ctypes.Structure):
    """Connector/C's MYSQL_BIND (mysql.h), field for field."""
    _fields_ = [("length", ctypes.POINTER(ctypes.c_ulong)), ("is_null", ctypes.POINTER(ctypes.c_char)),
                ("buffer", ctypes.c_void_p), ("error", ctypes.POINTER(ctypes.c_char)), ("row_ptr", ctypes.c_void_p),
                ("store_param_func", ctypes.c_void_p), ("fetch_result", ctypes.c_void_p),
                ("skip_result", ctypes.c_void_p), ("buffer_length", ctypes.c_ulong), ("offset", ctypes.c_ulong),
                ("length_value", ctypes.c_ulong), ("flags", ctypes.c_uint), ("pack_length", ctypes.c_uint),
                ("buffer_type", ctypes.c_int), ("error_value", ctypes.c_char), ("is_unsigned", ctypes.c_char),
                ("long_data_used", ctypes.c_char), ("is_null_value", ctypes.c_char), ("extension", ctypes.c_void_p)]


stmt = None
columns = []  # one (buffer, length) per result column, bound to stmt


def check_stmt(failed):
    if failed:
        raise MySQLError(lib.mysql_stmt_errno(stmt), lib.mysql_stmt_error(stmt).decode())


def query(sql):
    """The first value of sql's first row, as text."""
    row = query_row(sql)
    return row[0] if row else None


def execute():
    """Prepares AGGREGATE with a read-only cursor fetching 2 rows at a time, executes it and binds its columns as text."""
    global stmt, columns
    query("SET @dp_epsilon = 0.5")
    stmt = lib.mysql_stmt_init(mysql)
    check_stmt(lib.mysql_stmt_prepare(stmt, AGGREGATE.encode(), len(AGGREGATE)))
    for attr, value in ((STMT_ATTR_CURSOR_TYPE, CURSOR_TYPE_READ_ONLY), (STMT_ATTR_PREFETCH_ROWS, 2)):
        v = ctypes.c_ulong(value)
        check_stmt(lib.mysql_stmt_attr_set(stmt, attr, ctypes.byref(v)) != b"\x00")
    check_stmt(lib.mysql_stmt_execute(stmt))
    n = lib.mysql_stmt_field_count(stmt)
    binds = (Bind * n)()
    columns = [(ctypes.create_string_buffer(64), ctypes.c_ulong(0)) for _ in range(n)]
    for b, (buf, length) in zip(binds, columns):
        b.buffer_type, b.buffer, b.buffer_length = MYSQL_TYPE_STRING, ctypes.cast(buf, ctypes.c_void_p), 64
        b.length = ctypes.pointer(length)
    check_stmt(lib.mysql_stmt_bind_result(stmt, binds) != b"\x00")
    return f"columns={n}"


def fetch(limit):
    """The first column of up to limit rows fetched."""
    keys = []
    while len(keys) < limit:
        rc = lib.mysql_stmt_fetch(stmt)
        if rc == MYSQL_NO_DATA:
            break
        check_stmt(rc == 1)
        buf, length = columns[0]
        keys.append(buf.raw[:length.value].decode())
    return ",".join(keys)


def again():
    check_stmt(lib.mysql_stmt_reset(stmt) != b"\x00")
    check_stmt(lib.mysql_stmt_execute(stmt))
    return f"rows={len(fetch(100).split(','))}"


if step("connect", connect):
    step("before", lambda: query("SELECT dp_remaining_epsilon()"))
    if step("execute", execute):
        step("first", lambda: fetch(2))
        step("between", lambda: query("SELECT dp_remaining_epsilon()"))
        step("rest", lambda: fetch(100))
        step("again", again)
