// The queue: `n` opens "Review next" (unless typing in a filter box); a click on a cut cell shows it whole.
(function () {
  "use strict";
  function typing(target) {
    return target && (target.tagName === "INPUT" && target.type !== "checkbox" || target.tagName === "TEXTAREA" ||
      target.tagName === "SELECT");
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (window.dedupShortcut(event) === "n") {  // keys.js: by position, never an IME's keystroke
      const next = document.getElementById("review-next");
      if (next) { event.preventDefault(); window.location.assign(next.href); }
    }
  });
  document.querySelectorAll("table td.cut").forEach(function (cell) {
    cell.addEventListener("click", function (event) {
      if (event.target.closest("a")) return;
      cell.classList.toggle("open");
    });
  });
})();
