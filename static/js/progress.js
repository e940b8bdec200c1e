// Poll the status of running jobs, move their progress bars (one per stage when the job reports
// stages), and reload the page when every job shown has ended.
(function () {
  "use strict";
  const bars = document.querySelectorAll(".progress[data-status-url]");
  if (!bars.length) return;
  // In the page's language: Persian digits and ٪ in the fa interface, as the server's `digits` filter writes.
  const percent = new Intl.NumberFormat(document.documentElement.lang || undefined,
                                        { style: "percent", maximumFractionDigits: 0 });

  function renderStages(container, stages) {
    if (!container) return;
    container.replaceChildren();
    Object.keys(stages).forEach(function (name) {
      const label = document.createElement("span");
      label.textContent = name;
      const bar = document.createElement("progress");
      bar.max = 1;
      bar.value = stages[name];
      container.append(label, bar);
    });
  }

  function poll() {
    let pending = 0;
    const requests = Array.from(bars).map(function (bar) {
      return fetch(bar.dataset.statusUrl, { headers: { Accept: "application/json" } })
        .then(function (r) { return r.json(); })
        .then(function (state) {
          bar.querySelector("progress").value = state.fraction;
          // The page's status badge follows the job (it was written when the page was served).
          const badge = document.querySelector("[data-status-badge]");
          if (badge && state.status) {
            const label = state.label || state.status;  // the state in the interface's language
            badge.textContent = label.charAt(0).toUpperCase() + label.slice(1);
            badge.className = "badge status-" + state.status;
          }
          bar.querySelector(".label").textContent =
            (state.label || state.status) + (state.active ? " " + percent.format(state.fraction) : "") +
            (state.stage ? " — " + state.stage : "");
          renderStages(bar.querySelector(".stages"), state.stages || {});
          // A queued job says what it waits for (no worker yet, Redis away), or nothing once it runs.
          let hint = bar.querySelector(".waiting");
          if (state.hint && !hint) {
            hint = document.createElement("div");
            hint.className = "hint waiting";
            bar.append(hint);
          }
          if (hint) hint.textContent = state.hint || "";
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
