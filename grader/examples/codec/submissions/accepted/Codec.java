import java.util.Scanner;

public class Codec {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        String mode = in.next(), data = in.next();
        StringBuilder out = new StringBuilder();
        if (mode.equals("encode")) {
            for (char c : data.toCharArray()) out.append(String.format("%02d", c - 'a' + 1));
        } else {
            for (int i = 0; i + 1 < data.length(); i += 2)
                out.append((char) ('a' + Integer.parseInt(data.substring(i, i + 2)) - 1));
        }
        System.out.println(out);
    }
}
