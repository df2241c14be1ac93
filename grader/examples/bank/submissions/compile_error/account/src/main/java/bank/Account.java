package bank;

public class Account {
    public long balance() {
        return balance;  // no such field
    }
}
