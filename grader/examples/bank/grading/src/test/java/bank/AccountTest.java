package bank;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Visible tests: students see these results as soon as they ran. */
class AccountTest {
    @Test
    void startsEmpty() {
        assertEquals(0, new Account().balance());
    }

    @Test
    void depositAndWithdraw() {
        Account a = new Account();
        a.deposit(100);
        a.withdraw(30);
        assertEquals(70, a.balance());
    }

    @Test
    void cannotOverdraw() {
        Account a = new Account();
        a.deposit(10);
        assertThrows(IllegalArgumentException.class, () -> a.withdraw(11));
    }
}
