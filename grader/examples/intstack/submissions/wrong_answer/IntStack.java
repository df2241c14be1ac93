import java.util.Arrays;

public class IntStack {
    private int[] items = new int[4];
    private int size;

    public void push(int x) {
        if (size == items.length) items = Arrays.copyOf(items, 2 * size);
        items[size++] = x;
    }

    public int pop() {
        if (size == 0) throw new IllegalStateException("empty stack");
        return items[--size];
    }

    public int peek() {
        return size == 0 ? 0 : items[size - 1];  // no error on an empty stack
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }
}
