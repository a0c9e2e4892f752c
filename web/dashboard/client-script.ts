/**
 * The dashboard's one script, served from `/config/assets/dashboard.js` (the CSP allows scripts from this server
 * only, never inline). It keeps the `data-region` parts of a view current from `/config/events` (server-sent
 * events carrying server-rendered, escaped HTML per region) and appends new log lines on the log view. Without it
 * every view still works: it is rendered complete on the server.
 */
export const DASHBOARD_SCRIPT = `'use strict';
(function () {
  var main = document.getElementById('content');
  if (!main || typeof EventSource === 'undefined') return;
  var view = main.getAttribute('data-live');
  if (view) {
    var events = new EventSource('/config/events?view=' + encodeURIComponent(view));
    // The session ended (logout, expiry): stop instead of reconnecting.
    events.addEventListener('session-ended', function () { events.close(); });
    events.addEventListener('regions', function (e) {
      var regions = JSON.parse(e.data);
      Object.keys(regions).forEach(function (name) {
        var el = document.querySelector('[data-region="' + name + '"]');
        // The HTML is rendered and escaped by the server, exactly as on a full page load.
        if (el && el.innerHTML !== regions[name]) el.innerHTML = regions[name];
      });
    });
  }
  var list = document.getElementById('log-lines');
  if (list) {
    var select = document.getElementById('log-level');
    var source;
    var after = 0;
    var items = list.querySelectorAll('li');
    var open = function (level) {
      if (source) source.close();
      source = new EventSource('/config/log/stream?level=' + encodeURIComponent(level) + '&after=' + after);
      source.addEventListener('session-ended', function () { source.close(); });
      source.addEventListener('line', function (e) {
        var data = JSON.parse(e.data);
        after = Math.max(after, data.seq);
        var template = document.createElement('template');
        template.innerHTML = data.html;
        list.appendChild(template.content);
        while (list.children.length > 500) list.removeChild(list.firstChild);
      });
    };
    after = Number(list.getAttribute('data-after') || '0');
    open(list.getAttribute('data-level') || 'info');
    if (select) {
      select.addEventListener('change', function () {
        var level = select.value;
        history.replaceState(null, '', '/config/log?level=' + encodeURIComponent(level));
        list.setAttribute('data-level', level);
        while (list.firstChild) list.removeChild(list.firstChild);
        after = 0;
        open(level);
      });
    }
  }
})();
`;
