// The image's HEALTHCHECK: healthy while the app answers readiness (its database answers) on the
// port it listens on, which the environment may have changed from the default.
const port = process.env.APP === 'object-sets' ? process.env.OBJECT_SETS_PORT || 3002 : process.env.OBJECTS_PORT || 3001;
fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2500) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
