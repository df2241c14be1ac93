public class IntStack {
    private int[] items = new int[4];
    private int size;

    public void push(int x) {
        items[size++] = x
    }
}
