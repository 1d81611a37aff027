// Keeps a ktune dashboard page current. A study's page polls the study's state once a second
// (one small query), fetches the report's body again only when the study holds more
// evaluations, and says when the storage cannot be read; the list of studies is rebuilt from
// /api/studies every two seconds. Nothing is reloaded; nothing is written.
(function () {
  "use strict";
  var main = document.querySelector("main");
  var live = document.getElementById("live");
  var page = document.body.dataset;
  var token = new URLSearchParams(location.search).get("token");
  var suffix = token ? "?token=" + encodeURIComponent(token) : "";
  var busy = false;
  function say(text, error) {
    live.textContent = text;
    live.className = error ? "warning" : "caption";
  }
  function tick() {
    if (busy) return;
    busy = true;
    fetch(page.state + suffix, { cache: "no-store" })
      .then(function (r) { return r.json().then(function (j) { return [r.ok, j]; }); })
      .then(function (pair) {
        var s = pair[1];
        if (!pair[0]) { say("cannot read the study now: " + s.error + " (trying again)", true); return; }
        var by = (s.claimed_by || []).map(function (c) { return c.worker + " (" + c.claims + ")"; }).join(", ");
        var state = s.claims > 0 ? s.claims + " configuration(s) being measured now by " + by :
          (s.budget !== null && s.evaluations >= s.budget ? "finished: the budget is spent" : "no worker is measuring now");
        say("live: " + s.evaluations + " evaluations, " + s.workers + " worker(s); " + state +
          " · " + new Date().toLocaleTimeString(), false);
        if (String(s.evaluations) === main.dataset.evaluations) return;
        return fetch(page.body + suffix, { cache: "no-store" })
          .then(function (r) { return r.text(); })
          .then(function (html) {
            var next = new DOMParser().parseFromString(html, "text/html").querySelector("main");
            if (next) { main.innerHTML = next.innerHTML; main.dataset.evaluations = next.dataset.evaluations; }
          });
      })
      .catch(function (e) { say("the dashboard does not answer: " + e + " (trying again)", true); })
      .then(function () { busy = false; });
  }
  if (page.state) { tick(); setInterval(tick, 1000); }
  // The list of studies: rebuilt from /api/studies every two seconds (text only, no markup).
  function studyState(s) {
    if (s.claims > 0) {
      var by = (s.claimed_by || []).map(function (c) { return c.worker + " (" + c.claims + ")"; }).join(", ");
      return ["running", "running: " + s.claims + " being measured by " + by];
    }
    if (s.budget !== null && s.evaluations >= s.budget) return ["finished", "finished"];
    return ["stopped", "stopped"];
  }
  function number(v) { return v === null ? "-" : String(Number(v.toPrecision(4))); }
  function listTick() {
    fetch(page.studies + suffix, { cache: "no-store" })
      .then(function (r) { return r.json().then(function (j) { return [r.ok, j]; }); })
      .then(function (pair) {
        if (!pair[0]) { say("cannot read the storage now: " + pair[1].error + " (trying again)", true); return; }
        var body = document.querySelector("#studies tbody");
        var rows = pair[1].map(function (s) {
          var st = studyState(s);
          var tr = document.createElement("tr");
          tr.className = "study " + st[0];
          var a = document.createElement("a");
          a.href = "/study/" + encodeURIComponent(s.name) + suffix;
          a.textContent = s.name;
          var cells = [a, st[1], s.evaluations, s.failed, number(s.best),
            s.budget === null ? "-" : s.budget, s.workers,
            s.created === null ? "-" : new Date(s.created * 1000).toISOString().slice(0, 19) + "Z"];
          cells.forEach(function (c, i) {
            var td = document.createElement("td");
            if (c instanceof Node) td.appendChild(c); else td.textContent = String(c);
            if (i === 1) td.className = st[0];
            tr.appendChild(td);
          });
          return tr;
        });
        body.replaceChildren.apply(body, rows);
        document.getElementById("no-studies").hidden = rows.length > 0;
        say("live · " + new Date().toLocaleTimeString(), false);
      })
      .catch(function (e) { say("the dashboard does not answer: " + e + " (trying again)", true); });
  }
  if (page.studies) { listTick(); setInterval(listTick, 2000); }
})();
