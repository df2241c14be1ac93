import java.util.NoSuchElementException;

/** Forgets to wrap around the end of the array: 5 of 10 points (the hidden tests fail). */
public class RingBuffer {
    private final int capacity;
    private final int[] items;
    private int head;
    private int tail;

    public RingBuffer(int capacity) {
        this.capacity = capacity;
        items = new int[capacity];
    }

    public boolean offer(int value) {
        if (tail == capacity) return false;  // full, or only at the end of the array
        items[tail++] = value;
        return true;
    }

    public int poll() {
        if (tail == head) throw new NoSuchElementException("empty");
        return items[head++];
    }

    public int size() {
        return tail - head;
    }
}
