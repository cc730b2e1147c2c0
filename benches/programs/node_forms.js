// Node's promise and timer forms at scale (the same program as
// node_forms.raya). Argument: which part to run (all by default).
const part = process.argv.length > 2 ? process.argv[2] : "all";

async function roundTrips() {
  let sum = 0;
  for (let i = 0; i < 1000000; i++) {
    sum += await new Promise((r) => r(i));
  }
  return sum;
}

async function allExecutors() {
  const ps = [];
  for (let i = 0; i < 100000; i++) ps.push(new Promise((r) => r(i)));
  const vs = await Promise.all(ps);
  return vs.length;
}

async function thenChains() {
  let last = 0;
  for (let round = 0; round < 200; round++) {
    let p = Promise.resolve(0);
    for (let i = 0; i < 1000; i++) p = p.then((v) => v + 1);
    last = await p;
  }
  return last;
}

function timers() {
  return new Promise((resolve) => {
    let fired = 0;
    for (let i = 0; i < 10000; i++) {
      setTimeout(() => {
        fired++;
        if (fired === 10000) resolve(fired);
      }, 1);
    }
  });
}

(async () => {
  if (part === "all" || part === "roundtrips") console.log("round trips", await roundTrips());
  if (part === "all" || part === "all-executors") console.log("Promise.all", await allExecutors());
  if (part === "all" || part === "then-chains") console.log("then chains", await thenChains());
  if (part === "all" || part === "timers") console.log("timers", await timers());
})();
