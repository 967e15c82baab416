import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * MariaDB Connector/J: connect with the URL given as the first argument (user and password follow), browse with
 * DatabaseMetaData.getTables/getColumns/getPrimaryKeys, run a DP aggregate, ask a prepared grouped aggregate and a
 * prepared zero-row probe for their ResultSetMetaData before executing them (as BI tools and IDEs do), SET @dp_epsilon
 * and a refused query.
 * Prints one line per step, as the Python scripts do (see steps.py).
 */
public final class ClientSteps {
    interface Step {
        String run() throws Exception;
    }

    private static Connection conn;

    private static boolean step(String name, Step s) {
        try {
            String detail = s.run();
            System.out.println(name + "\tok\t" + detail);
            return true;
        } catch (Exception e) {
            int code = e instanceof SQLException ? ((SQLException) e).getErrorCode() : 0;
            System.out.println(name + "\terror\t" + code + "\t" + String.valueOf(e.getMessage()).replaceAll("\\s+", " "));
            return false;
        }
    }

    private static String browse() throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        List<String> tables = new ArrayList<>();
        try (ResultSet rs = md.getTables(conn.getCatalog(), null, "%", new String[] {"TABLE"})) {
            while (rs.next()) tables.add(rs.getString("TABLE_NAME"));
        }
        List<String> cols = new ArrayList<>();
        try (ResultSet rs = md.getColumns(conn.getCatalog(), null, "pums", "%")) {
            while (rs.next()) cols.add(rs.getString("COLUMN_NAME"));
        }
        int pk = 0;
        try (ResultSet rs = md.getPrimaryKeys(conn.getCatalog(), null, "pums")) {
            while (rs.next()) pk++;
        }
        return "tables=" + String.join(",", tables) + ";columns=" + String.join(",", cols) + ";pk=" + pk;
    }

    private static String query(String sql) throws SQLException {
        try (Statement st = conn.createStatement()) {
            if (!st.execute(sql)) return "done";
            try (ResultSet rs = st.getResultSet()) {
                return rs.next() ? rs.getString(1) : "";
            }
        }
    }

    private static String columns(ResultSetMetaData md) throws SQLException {
        List<String> cols = new ArrayList<>();
        for (int i = 1; i <= md.getColumnCount(); i++) cols.add(md.getColumnLabel(i) + " " + md.getColumnTypeName(i));
        return md.getColumnCount() + ":" + String.join(",", cols);
    }

    /** The metadata of the prepared sql before it runs with 30 bound, which must be its result set's. */
    private static String metadata(String sql) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            String before = columns(ps.getMetaData());
            ps.setInt(1, 30);
            try (ResultSet rs = ps.executeQuery()) {
                String after = columns(rs.getMetaData());
                if (!before.equals(after)) {
                    throw new SQLException("getMetaData() before executing gave " + before + ", the result set " + after);
                }
            }
            return before;
        }
    }

    public static void main(String[] args) {
        String url = args[0], user = args[1], password = args[2];
        if (!step("connect", () -> {
            conn = DriverManager.getConnection(url, user, password);
            return url.contains("useSsl=true") ? "tls" : "plain";
        })) return;
        step("browse", ClientSteps::browse);
        step("aggregate", () -> query("SELECT AVG(age) FROM pums"));
        step("metadata", () -> metadata("SELECT race, COUNT(*) AS n, AVG(income) FROM pums WHERE age > ? GROUP BY race"));
        step("probe", () -> metadata("SELECT * FROM pums WHERE age > ? LIMIT 0"));
        step("set", () -> query("SET @dp_epsilon = 0.5"));
        step("refused", () -> query("SELECT * FROM pums"));
    }
}
