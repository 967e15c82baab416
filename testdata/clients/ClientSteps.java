import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * MariaDB Connector/J: connect with the URL given as the first argument (user and password follow), browse with
 * DatabaseMetaData.getTables/getColumns/getPrimaryKeys, run a DP aggregate, SET @dp_epsilon and a refused query.
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

    public static void main(String[] args) {
        String url = args[0], user = args[1], password = args[2];
        if (!step("connect", () -> {
            conn = DriverManager.getConnection(url, user, password);
            return url.contains("useSsl=true") ? "tls" : "plain";
        })) return;
        step("browse", ClientSteps::browse);
        step("aggregate", () -> query("SELECT AVG(age) FROM pums"));
        step("set", () -> query("SET @dp_epsilon = 0.5"));
        step("refused", () -> query("SELECT * FROM pums"));
    }
}
