package bank;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Hidden tests: in their own run, shown after staff release them. */
class AccountHiddenTest {
    @Test
    void rejectsNegativeDeposits() {
        assertThrows(IllegalArgumentException.class, () -> new Account().deposit(-5));
    }

    @Test
    void failedWithdrawalChangesNothing() {
        Account a = new Account();
        a.deposit(10);
        assertThrows(IllegalArgumentException.class, () -> a.withdraw(50));
        assertEquals(10, a.balance());
    }
}
