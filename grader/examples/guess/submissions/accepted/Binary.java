import java.io.*;

public class Binary {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        long lo = 1, hi = 1000000000L;
        while (lo <= hi) {
            long mid = (lo + hi) / 2;
            System.out.println("? " + mid);
            System.out.flush();
            String r = in.readLine();
            if (r == null || r.trim().equals("=")) return;
            if (r.trim().equals("<")) hi = mid - 1; else lo = mid + 1;
        }
    }
}
