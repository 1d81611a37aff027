// Keeps a ktune dashboard page current: polls the study's state once a second (one small
// query), fetches the report's body again only when the study holds more evaluations, and
// says when the storage cannot be read. Nothing is reloaded; nothing is written.
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
})();
