// The limiter's bundle (nest build limiter), plus the config thread's entry beside main.js: a
// worker runs a file of its own (apps/limiter/src/ops/config/config-reader.ts finds it there).
module.exports = (options) => ({
  ...options,
  entry: {
    main: options.entry,
    'config-thread': `${__dirname}/src/ops/config/config-thread.ts`,
  },
  output: {
    ...options.output,
    filename: options.output.filename.replace(/main\.js$/, '[name].js'),
  },
});
