/** Does not compile (a missing semicolon): every test scores 0, with javac's message. */
public class RingBuffer {
    public RingBuffer(int capacity) {
    }

    public boolean offer(int value) {
        return false
    }

    public int poll() {
        return 0;
    }

    public int size() {
        return 0;
    }
}
