import java.util.NoSuchElementException;

/** A bounded first-in first-out queue of ints over one array. */
public class RingBuffer {
    private final int[] items;
    private int head;
    private int size;

    public RingBuffer(int capacity) {
        items = new int[capacity];
    }

    public boolean offer(int value) {
        if (size == items.length) return false;
        items[(head + size) % items.length] = value;
        size++;
        return true;
    }

    public int poll() {
        if (size == 0) throw new NoSuchElementException("empty");
        int value = items[head];
        head = (head + 1) % items.length;
        size--;
        return value;
    }

    public int size() {
        return size;
    }
}
