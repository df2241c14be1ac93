# A different valid answer: odd numbers descending, then even numbers descending.
n = int(input())
if n in (2, 3):
    print(-1)
elif n == 1:
    print(1)
else:
    odds = list(range(n if n % 2 else n - 1, 0, -2))
    evens = list(range(n if n % 2 == 0 else n - 1, 0, -2))
    # n=4: 3 1 4 2
    print(*(odds + evens))
