import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Visible tests: students see these results as soon as they ran. */
class IntStackTest {
    @Test
    void newStackIsEmpty() {
        assertTrue(new IntStack().isEmpty());
    }

    @Test
    void pushThenPop() {
        IntStack s = new IntStack();
        s.push(7);
        assertEquals(7, s.pop());
    }

    @Test
    void lastInFirstOut() {
        IntStack s = new IntStack();
        s.push(1);
        s.push(2);
        assertEquals(2, s.pop());
        assertEquals(1, s.pop());
    }

    @Test
    void sizeCounts() {
        IntStack s = new IntStack();
        for (int i = 0; i < 5; i++) s.push(i);
        assertEquals(5, s.size());
    }

    @Test
    void popOnEmptyThrows() {
        assertThrows(IllegalStateException.class, () -> new IntStack().pop());
    }
}
