// Command testcredprovider is a kubelet image credential provider plugin for
// tests: it reads a CredentialProviderRequest on stdin and answers per the
// protocol, or misbehaves as its --mode asks.
//
// Modes: ok (answer TEST_USERNAME/TEST_PASSWORD for $TEST_AUTH_KEY, by
// default the image's registry,
// with cacheKeyType $TEST_CACHE_KEY_TYPE, default Registry, and
// cacheDuration $TEST_CACHE_DURATION if set), hang (start a child that
// sleeps, write its pid to $TEST_PID_FILE, sleep), garbage (print text),
// flood (print without end), wrong-version (answer with another
// apiVersion), fail (print $TEST_PASSWORD on stderr and exit 1). Every run
// appends the image to $TEST_COUNT_FILE if set. With $TEST_RUNNING_DIR set,
// each run appends how many runs are in progress to $TEST_CONCURRENCY_FILE
// and sleeps $TEST_SLEEP first; with $TEST_CHILD_PID_FILE set, each run
// leaves a sleeping child behind and appends its pid there.
package main
