"""SQLAlchemy (PyMySQL dialect) and pandas: connect, reflection through
inspect(), pandas.read_sql of a DP aggregate, SET, a refused query."""
import pandas
import sqlalchemy
from sqlalchemy import inspect, text

from steps import AGGREGATE, CA, DB, HOST, PASSWORD, PORT, REFUSED, SET_EPSILON, USER, step

connect_args = {"ssl": {"ca": CA, "check_hostname": True}} if CA else {}
engine = sqlalchemy.create_engine(
    f"mysql+pymysql://{USER}:{PASSWORD}@{HOST}:{PORT}/{DB}", connect_args=connect_args, poolclass=sqlalchemy.pool.NullPool
)


def connect():
    global conn
    conn = engine.connect()
    return "tls" if CA else "plain"


def browse():
    insp = inspect(conn)
    tables = insp.get_table_names()
    cols = [c["name"] for c in insp.get_columns("pums")]
    pk = insp.get_pk_constraint("pums")
    idx = insp.get_indexes("pums")
    return f"tables={','.join(tables)};columns={','.join(cols)};pk={pk.get('constrained_columns')};indexes={len(idx)}"


def aggregate():
    df = pandas.read_sql(text(AGGREGATE), conn)
    return df.iloc[0, 0]


conn = None
if step("connect", connect):
    step("browse", browse)
    step("aggregate", aggregate)
    step("set", lambda: conn.execute(text(SET_EPSILON)) and "done")
    step("refused", lambda: conn.execute(text(REFUSED)).fetchall())
