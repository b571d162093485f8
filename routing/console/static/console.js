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
