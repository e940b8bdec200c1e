// Poll the status of running jobs and move their progress bars; reload when one ends.
(function () {
  "use strict";
  const bars = document.querySelectorAll(".progress[data-status-url]");
  if (!bars.length) return;
  function poll() {
    let pending = 0;
    const requests = Array.from(bars).map(function (bar) {
      return fetch(bar.dataset.statusUrl, { headers: { Accept: "application/json" } })
        .then(function (r) { return r.json(); })
        .then(function (state) {
          bar.querySelector("progress").value = state.fraction;
          bar.querySelector(".label").textContent =
            state.status + (state.active ? " " + Math.round(state.fraction * 100) + "%" : "") +
            (state.stage ? " — " + state.stage : "");
          if (state.active) pending += 1;
        })
        .catch(function () { pending += 1; });
    });
    Promise.all(requests).then(function () {
      if (pending) { setTimeout(poll, 1000); } else { window.location.reload(); }
    });
  }
  poll();
})();
