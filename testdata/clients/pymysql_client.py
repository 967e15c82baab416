"""PyMySQL: connect, browse information_schema, a DP aggregate, SET, a refused query."""
import pymysql

from steps import AGGREGATE, CA, DB, HOST, PASSWORD, PORT, REFUSED, SET_EPSILON, USER, step


def connect():
    global conn
    kwargs = {}
    if CA:
        kwargs["ssl"] = {"ca": CA, "check_hostname": True}
    conn = pymysql.connect(host=HOST, port=PORT, user=USER, password=PASSWORD, database=DB, **kwargs)
    return "tls" if CA else "plain"


def query(sql):
    with conn.cursor() as c:
        c.execute(sql)
        return c.fetchall()


def browse():
    tables = [r[0] for r in query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()")]
    cols = [r[0] for r in query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums' ORDER BY ORDINAL_POSITION")]
    return f"tables={','.join(tables)};columns={','.join(cols)}"


conn = None
if step("connect", connect):
    if CA:
        step("tls", lambda: "cipher=" + conn._sock.cipher()[0])
    step("browse", browse)
    step("aggregate", lambda: query(AGGREGATE)[0][0])
    step("set", lambda: (query(SET_EPSILON), "done")[1])
    step("refused", lambda: query(REFUSED))
