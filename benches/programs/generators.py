# A lazy pipeline of generator stages over 5,000,000 values: each value
# passes through range -> map -> filter -> take, one resumption per stage.
# The same program is generators.raya (Raya) and generators.js (Node).


def range_(n):
    i = 0
    while i < n:
        yield i
        i += 1


def map_(src, f):
    for x in src:
        yield f(x)


def filter_(src, p):
    for x in src:
        if p(x):
            yield x


def take(src, n):
    i = 0
    for x in src:
        if i >= n:
            return
        i += 1
        yield x


total = 0
count = 0
stages = take(filter_(map_(range_(5_000_000), lambda x: x * 3), lambda x: x % 2 == 0), 2_000_000)
for x in stages:
    total += x
    count += 1
print(count, total)
