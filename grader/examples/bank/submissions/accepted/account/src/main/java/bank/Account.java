package bank;

public class Account {
    private long balance;

    public long balance() {
        return balance;
    }

    public void deposit(long amount) {
        if (amount <= 0) throw new IllegalArgumentException("deposit must be positive");
        balance += amount;
    }

    public void withdraw(long amount) {
        if (amount <= 0 || amount > balance)
            throw new IllegalArgumentException("cannot withdraw " + amount);
        balance -= amount;
    }
}
