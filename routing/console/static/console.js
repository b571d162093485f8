// A replay redirects to the dead letters with the id in the address
// (?replayed=ID, ?already=ID) for the page to say what happened: once it is
// shown, the address drops it, so a reload, the live refresh or coming back
// to the page does not announce the send again.
(function () {
  var q = new URLSearchParams(location.search);
  if (!history.replaceState || (!q.has("replayed") && !q.has("already"))) return;
  q.delete("replayed");
  q.delete("already");
  var rest = q.toString();
  history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
})();

// A page the browser restores as it was when left (back, forward) would
// show what was true then, a replay button for a dead letter replayed since
// among it: fetch it again.
window.addEventListener("pageshow", function (e) {
  if (e.persisted) location.reload();
});

// Live refresh, opt-in: pages marked data-refresh reload themselves every
// N seconds while the "live" box is ticked (remembered per browser). Every
// page reads without this script.
(function () {
  var body = document.body;
  var every = parseInt(body.getAttribute("data-refresh") || "0", 10);
  var box = document.getElementById("live");
  if (!every || !box) return;
  box.parentNode.hidden = false;
  box.checked = localStorage.getItem("alertrouter.live") === "1";
  var timer = null;
  function arm() {
    clearTimeout(timer);
    if (box.checked) timer = setTimeout(function () { location.reload(); }, every * 1000);
  }
  box.addEventListener("change", function () {
    localStorage.setItem("alertrouter.live", box.checked ? "1" : "0");
    arm();
  });
  arm();
})();
