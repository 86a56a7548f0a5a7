package ignite

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine/server"
)

// The launcher is java/ignite in this repository, built by `make setup`
// (mvn package): target/tierbench-ignite.jar and its dependencies in
// target/lib.
const (
	jarName   = "tierbench-ignite.jar"
	mainClass = "io.tierbench.ignite.Main"
	// jarDirEnv names a folder holding tierbench-ignite.jar and lib/ (or the
	// java/ignite module whose target/ holds them).
	jarDirEnv = "TIERBENCH_IGNITE_DIR"
	// fallbackVersion is what the pom pins, if the jar's name does not say.
	fallbackVersion = "2.16.0"
)

// javaOpens are the --add-opens Ignite needs on Java 15 and later, as
// Ignite 2.16's own bin/include/jvmdefaults.sh passes them.
var javaOpens = []string{
	"java.base/jdk.internal.access",
	"java.base/jdk.internal.misc",
	"java.base/sun.nio.ch",
	"java.base/sun.util.calendar",
	"java.management/com.sun.jmx.mbeanserver",
	"jdk.internal.jvmstat/sun.jvmstat.monitor",
	"java.base/sun.reflect.generics.reflectiveObjects",
	"jdk.management/com.sun.management.internal",
	"java.base/java.io",
	"java.base/java.nio",
	"java.base/java.net",
	"java.base/java.util",
	"java.base/java.util.concurrent",
	"java.base/java.util.concurrent.locks",
	"java.base/java.util.concurrent.atomic",
	"java.base/java.lang",
	"java.base/java.lang.invoke",
	"java.base/java.math",
	"java.sql/java.sql",
	"java.base/java.lang.reflect",
	"java.base/java.time",
	"java.base/java.text",
	"java.management/sun.management",
	"java.desktop/java.awt.font",
}

// javaProps keep Ignite quiet and local: no update check, no logo, no
// performance hints, IPv4 loopback.
var javaProps = []string{
	"-Djava.net.preferIPv4Stack=true",
	"-DIGNITE_QUIET=true",
	"-DIGNITE_UPDATE_NOTIFIER=false",
	"-DIGNITE_NO_ASCII=true",
	"-DIGNITE_PERFORMANCE_SUGGESTIONS_DISABLED=true",
}

// javaCandidates are where java is looked for; a variable so a test can
// check the message for a missing JDK.
var javaCandidates = []string{"java", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "/usr/bin/java"}

// launcher is a java binary and the built launcher jar.
type launcher struct {
	java string
	dir  string // holds tierbench-ignite.jar and lib/
	// libs are further classpath entries: in a pod, the image's own
	// Ignite jars, which lib/ then leaves out.
	libs []string
}

// findLauncher finds java and the built jar, or says how to get them.
func findLauncher() (*launcher, error) {
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	dir, err := findJarDir()
	if err != nil {
		return nil, err
	}
	return &launcher{java: java, dir: dir}, nil
}

func findJava() (string, error) {
	cands := javaCandidates
	if home := os.Getenv("JAVA_HOME"); home != "" {
		cands = append([]string{filepath.Join(home, "bin", "java")}, cands...)
	}
	for _, c := range cands {
		if strings.Contains(c, "/") {
			if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
				return c, nil
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("java is not installed: install a JDK 17: apt-get install openjdk-17-jre-headless")
}

// jarDirs lists the folders the build is looked for in (server.BuildDirs).
func jarDirs() []string { return server.BuildDirs("ignite", jarDirEnv) }

// LibDir is the launcher's lib folder: the Ignite jars of this
// machine's build, which tierbench cluster up puts into the node's Ignite
// image.
func LibDir() (string, error) {
	dir, err := findJarDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "lib"), nil
}

func findJarDir() (string, error) {
	for _, d := range jarDirs() {
		if fi, err := os.Stat(filepath.Join(d, jarName)); err == nil && !fi.IsDir() {
			abs, err := filepath.Abs(d)
			if err != nil {
				return "", err
			}
			// The jar names its dependencies in lib/; without them the JVM
			// fails every run with a missing class.
			if fi, err := os.Stat(filepath.Join(abs, "lib")); err != nil || !fi.IsDir() {
				return "", fmt.Errorf("the Ignite launcher in %s has no lib/ folder of dependencies: run `make setup` (and `make install` for an installed tierbench)", abs)
			}
			return abs, nil
		}
	}
	return "", fmt.Errorf("the Ignite launcher java/ignite/target/%s is not built: run `make setup` (mvn package in java/ignite) and, for an installed tierbench, `make install`; or set %s to the folder holding it", jarName, jarDirEnv)
}

// Preflight reports whether java and the built launcher are where Open
// looks for them, so a study is refused before it starts rather than
// storing every run failed for want of them.
func (Engine) Preflight() error {
	_, err := findLauncher()
	return err
}

// args returns the JVM's arguments for one command of the launcher.
func (l *launcher) args(heap int64, command ...string) []string {
	mib := strconv.FormatInt(heap>>20, 10) + "m"
	// -XX:-UsePerfData: no /tmp/hsperfdata_USER folder, which the JVM
	// leaves behind (empty) when it exits; tierbench reads no jstat.
	args := []string{"-Xms" + mib, "-Xmx" + mib, "-XX:+UseG1GC", "-XX:+DisableExplicitGC", "-XX:-UsePerfData"}
	for _, o := range javaOpens {
		args = append(args, "--add-opens="+o+"=ALL-UNNAMED")
	}
	args = append(args, javaProps...)
	cp := append([]string{filepath.Join(l.dir, jarName), filepath.Join(l.dir, "lib", "*")}, l.libs...)
	args = append(args, "-cp", strings.Join(cp, ":"), mainClass)
	return append(args, command...)
}

// version names the Ignite version from the ignite-core jar in lib/.
func (l *launcher) version() string {
	m, _ := filepath.Glob(filepath.Join(l.dir, "lib", "ignite-core-*.jar"))
	if len(m) == 1 {
		return "Apache Ignite " + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), "ignite-core-"), ".jar")
	}
	return "Apache Ignite " + fallbackVersion
}
