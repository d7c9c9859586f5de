// citeseal audit view (MCP App, ui://citeseal/audit-view): the host's bridge, nothing else.
// It shows the report page the server rendered with the site's report template (carried in
// the audit_answer result's _meta["citeseal/audit-view"].html, already escaped by Jinja).
// The page's <main> is parsed inert (DOMParser runs no script) and moved in; this page's CSP
// allows only this script and the site stylesheet, by hash, so markup cannot run code.
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26";
  var META = "citeseal/audit-view";
  var nextId = 1;
  var waiting = {};

  function send(message) {
    window.parent.postMessage(message, "*");
  }

  function request(method, params, done) {
    var id = nextId++;
    waiting[id] = done;
    send({ jsonrpc: "2.0", id: id, method: method, params: params });
  }

  function say(text) {
    var main = document.getElementById("main");
    var line = document.createElement("p");
    line.className = "notice";
    line.textContent = text;
    main.replaceChildren(line);
  }

  function show(result) {
    var view = result && result._meta && result._meta[META];
    if (!view || typeof view.html !== "string") {
      say("This result carries no audit report page.");
      return;
    }
    var page = new DOMParser().parseFromString(view.html, "text/html");
    var report = page.getElementById("main");
    if (!report) {
      say("The audit report page could not be read.");
      return;
    }
    var main = document.getElementById("main");
    main.replaceChildren.apply(main, Array.prototype.map.call(report.childNodes, function (node) {
      return document.importNode(node, true);
    }));
    document.title = page.title;
  }

  window.addEventListener("message", function (event) {
    var message = event.data;
    if (event.source !== window.parent || !message || message.jsonrpc !== "2.0") {
      return;
    }
    if (message.id !== undefined && waiting[message.id]) {
      var done = waiting[message.id];
      delete waiting[message.id];
      done(message);
    } else if (message.method === "ui/notifications/tool-result") {
      show(message.params);
    }
  });

  request(
    "ui/initialize",
    {
      protocolVersion: PROTOCOL,
      appInfo: { name: "citeseal-audit-view", version: "1" },
      appCapabilities: {}
    },
    function () {
      send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    }
  );
})();
