// Package host is the folder of the host kit: small packages, each with
// one job, for what tierbench does on the machine it runs on, below
// everything that runs programs (tiers, engines, tools, the Kubernetes
// node, the runner). It holds no code of its own.
//
//   - host/proc: every process group tierbench starts (OwnGroup and its
//     kin), signalled, stopped and killed as a group (Running); helper
//     commands and tools run as an OS user (Run, Output); programs found
//     (Find); the users servers run as (RunAs, LookupUser, ChownAll)
//   - host/reach: whether a server's OS user can reach its folders
//   - host/secrets: a run's password, and the private folders and files
//     that hold it
//   - host/tcpport: free loopback ports, and nftables locks that close a
//     server's ports to other local users
//   - host/cgroupfs: cgroup hierarchies, v1 and v2, and memory groups
//   - host/mountinfo: the one reader of /proc/self/mountinfo, and who
//     holds a mount busy
//   - host/procfs: the one reader of /proc/PID/stat and lister of
//     processes
//   - host/logtail: the last lines of a log or of a program's output
//   - host/userfile: files at paths the user names, written through links
//     and devices without replacing them, and read only when a file
//
// Packages here import only each other (layers_test.go checks it), so
// anything in tierbench may stand on them.
package host
