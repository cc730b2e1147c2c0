# The `regex` workload: 200k log lines generated deterministically, then
# for each line one match with seven groups, a second pattern on one of
# the groups, and counts. The same program as regex.raya and regex.js.
import re

seed = 42


def rnd(n):
    global seed
    seed = (seed * 48271) % 2147483647
    return seed % n


def pad(n):
    return "0" + str(n) if n < 10 else str(n)


levels = ["INFO", "INFO", "INFO", "WARN", "ERROR"]
methods = ["GET", "GET", "POST", "PUT", "DELETE"]
paths = ["/api/users/", "/api/orders/", "/static/app.js", "/api/items/", "/health"]
statuses = ["200", "200", "200", "404", "500"]
lines = []
for i in range(200000):
    time = "2024-05-17T" + pad(rnd(24)) + ":" + pad(rnd(60)) + ":" + pad(rnd(60))
    p = paths[rnd(5)]
    path = p + str(rnd(10000)) if p.endswith("/") else p
    level = levels[rnd(5)]
    worker = rnd(16)
    method = methods[rnd(5)]
    status = statuses[rnd(5)]
    # One line in a hundred is malformed (no duration).
    ms = "-" if rnd(100) == 0 else str(rnd(2000)) + "ms"
    lines.append(time + " " + level + " [worker-" + str(worker) + "] " + method + " " + path + " " + status + " " + ms)

line_re = re.compile(r"^(\S+) (INFO|WARN|ERROR) \[worker-(\d+)\] (GET|POST|PUT|DELETE) (\S+) (\d{3}) (\d+)ms$")
user_re = re.compile(r"^/api/users/(\d+)$")
errors = 0
total_ms = 0
users = 0
user_sum = 0
bad = 0
by_status = {}
for line in lines:
    m = line_re.match(line)
    if m is None:
        bad += 1
        continue
    if m.group(2) == "ERROR":
        errors += 1
    total_ms += int(m.group(7))
    by_status[m.group(6)] = by_status.get(m.group(6), 0) + 1
    u = user_re.match(m.group(5))
    if u is not None:
        users += 1
        user_sum += int(u.group(1))
print("lines", len(lines), "malformed", bad, "errors", errors)
print("total ms", total_ms, "user requests", users, "user id sum", user_sum)
print("200:", by_status.get("200"), "404:", by_status.get("404"), "500:", by_status.get("500"))
