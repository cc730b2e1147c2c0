// The `regex` workload: 200k log lines generated deterministically, then
// for each line one match with seven groups, a second pattern on one of
// the groups, and counts. The same program as regex.raya (types
// removed) and regex.py.
let seed = 42;
function rnd(n) {
  seed = (seed * 48271) % 2147483647;
  return seed % n;
}
function pad(n) {
  return n < 10 ? "0" + n : "" + n;
}

const levels = ["INFO", "INFO", "INFO", "WARN", "ERROR"];
const methods = ["GET", "GET", "POST", "PUT", "DELETE"];
const paths = ["/api/users/", "/api/orders/", "/static/app.js", "/api/items/", "/health"];
const statuses = ["200", "200", "200", "404", "500"];
const lines = [];
for (let i = 0; i < 200000; i++) {
  const time = "2024-05-17T" + pad(rnd(24)) + ":" + pad(rnd(60)) + ":" + pad(rnd(60));
  const p = paths[rnd(5)];
  const path = p.endsWith("/") ? p + rnd(10000) : p;
  const level = levels[rnd(5)];
  const worker = rnd(16);
  const method = methods[rnd(5)];
  const status = statuses[rnd(5)];
  // One line in a hundred is malformed (no duration).
  const ms = rnd(100) === 0 ? "-" : rnd(2000) + "ms";
  lines.push(time + " " + level + " [worker-" + worker + "] " + method + " " + path + " " + status + " " + ms);
}

const line_re = /^(\S+) (INFO|WARN|ERROR) \[worker-(\d+)\] (GET|POST|PUT|DELETE) (\S+) (\d{3}) (\d+)ms$/;
const user_re = /^\/api\/users\/(\d+)$/;
let errors = 0;
let totalMs = 0;
let users = 0;
let userSum = 0;
let bad = 0;
const byStatus = new Map();
for (const line of lines) {
  const m = line_re.exec(line);
  if (m === null) {
    bad++;
    continue;
  }
  if (m[2] === "ERROR") errors++;
  totalMs += Number(m[7]);
  byStatus.set(m[6], (byStatus.get(m[6]) ?? 0) + 1);
  const u = user_re.exec(m[5]);
  if (u !== null) {
    users++;
    userSum += Number(u[1]);
  }
}
console.log("lines", lines.length, "malformed", bad, "errors", errors);
console.log("total ms", totalMs, "user requests", users, "user id sum", userSum);
console.log("200:", byStatus.get("200"), "404:", byStatus.get("404"), "500:", byStatus.get("500"));
