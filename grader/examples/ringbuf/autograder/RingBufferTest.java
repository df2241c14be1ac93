import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The staff's tests of RingBuffer; weights.json says what each is worth. */
@Timeout(10)
class RingBufferTest {
    @Test
    void emptyBufferHasNothing() {
        RingBuffer b = new RingBuffer(3);
        assertEquals(0, b.size());
        assertThrows(NoSuchElementException.class, b::poll);
    }

    @Test
    void offeredValuesComeBackInOrder() {
        RingBuffer b = new RingBuffer(4);
        for (int i = 1; i <= 3; i++) assertTrue(b.offer(i * 10));
        assertEquals(3, b.size());
        assertEquals(10, b.poll());
        assertEquals(20, b.poll());
        assertEquals(1, b.size());
    }

    @Test
    void aFullBufferRefusesMore() {
        RingBuffer b = new RingBuffer(2);
        assertTrue(b.offer(1));
        assertTrue(b.offer(2));
        assertFalse(b.offer(3));
        assertEquals(2, b.size());
    }

    @Test
    void valuesWrapAroundTheEnd() {
        RingBuffer b = new RingBuffer(3);
        b.offer(1);
        b.offer(2);
        b.offer(3);
        assertEquals(1, b.poll());
        assertEquals(2, b.poll());
        assertTrue(b.offer(4));
        assertTrue(b.offer(5));
        assertEquals(3, b.poll());
        assertEquals(4, b.poll());
        assertEquals(5, b.poll());
    }

    @Test
    void manyCyclesKeepTheSize() {
        RingBuffer b = new RingBuffer(5);
        for (int i = 0; i < 1000; i++) {
            assertTrue(b.offer(i));
            if (i >= 4) assertEquals(i - 4, b.poll());
        }
        assertEquals(4, b.size());
    }
}
