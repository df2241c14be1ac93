package bank;

public class Account {
    private long balance;

    public long balance() {
        return balance;
    }

    public void deposit(long amount) {  // takes negative deposits
        balance += amount;
    }

    public void withdraw(long amount) {
        if (amount > balance) throw new IllegalArgumentException("cannot withdraw " + amount);
        balance -= amount;
    }
}
