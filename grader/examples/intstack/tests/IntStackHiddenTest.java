import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Hidden tests: in their own run, shown after staff release them. */
class IntStackHiddenTest {
    @Test
    void growsPastAnyInitialCapacity() {
        IntStack s = new IntStack();
        for (int i = 0; i < 100_000; i++) s.push(i);
        assertEquals(99_999, s.peek());
        assertEquals(100_000, s.size());
    }

    @Test
    void peekOnEmptyThrows() {
        assertThrows(IllegalStateException.class, () -> new IntStack().peek());
    }
}
