/* global React, ReactDOM, GraphiQL */
// Runs after the admin's own copies of React, ReactDOM and GraphiQL. Queries and mutations go to
// POST /graphql, subscriptions to graphql-ws on the same path; the headers of GraphiQL's Headers tab
// (Authorization: Bearer …) go with both, as connectionParams for subscriptions.
'use strict';

(function startGraphiql() {
  const url = new URL('graphql', window.location.href);
  const subscriptionUrl = new URL(url);
  subscriptionUrl.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const fetcher = GraphiQL.createFetcher({ url: url.href, subscriptionUrl: subscriptionUrl.href });
  const root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, { fetcher }));
})();
