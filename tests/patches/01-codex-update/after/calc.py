def add(a, b):
    return a + b


def sub(a, b):
    """Subtract b from a."""
    return a - b


def main():
    print(add(1, 2))
    print(sub(3, 1))
