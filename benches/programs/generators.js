// A lazy pipeline of generator stages over 5,000,000 values: each value
// passes through range -> map -> filter -> take, one resumption per stage.
// The same program is generators.raya (Raya) and generators.py (Python 3).

function* range(n) {
  for (let i = 0; i < n; i++) yield i;
}

function* map(src, f) {
  for (const x of src) yield f(x);
}

function* filter(src, p) {
  for (const x of src) if (p(x)) yield x;
}

function* take(src, n) {
  let i = 0;
  for (const x of src) {
    if (i >= n) return;
    i++;
    yield x;
  }
}

let sum = 0;
let count = 0;
const stages = take(filter(map(range(5_000_000), (x) => x * 3), (x) => x % 2 === 0), 2_000_000);
for (const x of stages) {
  sum += x;
  count++;
}
console.log(count, sum);
