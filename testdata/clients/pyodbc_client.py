"""MariaDB Connector/ODBC through unixODBC and pyodbc: connect, SQLTables and
SQLColumns, SQLGetTypeInfo(SQL_ALL_TYPES) as ODBC BI tools call it on
connecting, a DP aggregate, SET, a refused query."""
import pyodbc

from steps import AGGREGATE, CA, DB, HOST, PASSWORD, PORT, REFUSED, SET_EPSILON, USER, step


def connect():
    global conn
    dsn = f"DRIVER={{MariaDB Unicode}};SERVER={HOST};PORT={PORT};UID={USER};PWD={PASSWORD};DATABASE={DB}"
    if CA:
        dsn += f";SSLCA={CA};SSLVERIFY=1"
    conn = pyodbc.connect(dsn, autocommit=True)
    return "tls" if CA else "plain"


def browse():
    c = conn.cursor()
    tables = [r.table_name for r in c.tables(tableType="TABLE")]
    cols = [r.column_name for r in c.columns(table="pums")]
    return f"tables={','.join(tables)};columns={','.join(cols)}"


def type_info():
    rows = conn.cursor().getTypeInfo().fetchall()  # SQLGetTypeInfo(SQL_ALL_TYPES)
    names = {r.type_name for r in rows}
    if len(rows) <= 40 or not {"VARCHAR", "BIGINT", "DATETIME"} <= names:
        raise AssertionError(f"{len(rows)} types: {sorted(names)}")
    return f"{len(rows)} types"


def query(sql):
    c = conn.cursor()
    c.execute(sql)
    return c.fetchall() if c.description else "done"


conn = None
if step("connect", connect):
    step("browse", browse)
    step("typeinfo", type_info)
    step("aggregate", lambda: query(AGGREGATE)[0][0])
    step("set", lambda: query(SET_EPSILON))
    step("refused", lambda: query(REFUSED))
