// The cluster lane shares one test cluster between two jest workers; a test that fails is run once more, and its
// first failure is printed (`RETRY 1` in the log, so a flake stays visible). A test that fails twice fails the run.
/* global jest */
jest.retryTimes(1, { logErrorsBeforeRetry: true });
