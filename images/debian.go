package images

import (
	"fmt"
	"strconv"
)

// Suite is the Debian release the engine images are built from: the
// one this machine runs, whose postgresql-15, redis 7.0 and mariadb
// 10.11 match the official images' versions.
const Suite = "bookworm"

// StdPath is PATH in the engine images, as in the official ones.
const StdPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// SetIDHook is a customize hook (Recipe.Hooks) that gives the Debian
// user and group name the id id, which the official images use (999)
// and pods run as, in place of the system id the package's postinst
// picked, and gives what the old ids owned to the new. It edits the
// root's passwd and group from outside, so that it needs no passwd
// tools in the image, and stops if id is taken by anyone else.
func SetIDHook(name string, id int) string {
	n, i := strconv.Quote(name), strconv.Itoa(id)
	return fmt.Sprintf(`set -eu
r=$1
ou=$(awk -F: -v n=%[1]s '$1==n{print $3}' "$r/etc/passwd")
og=$(awk -F: -v n=%[1]s '$1==n{print $3}' "$r/etc/group")
if [ -z "$ou" ] || [ -z "$og" ]; then echo "no user or group %[1]s" >&2; exit 1; fi
for f in passwd group; do
	if awk -F: -v n=%[1]s -v i=%[2]s '$3==i && $1!=n{found=1} END{exit !found}' "$r/etc/$f"; then
		echo "id %[2]s is taken in /etc/$f" >&2; exit 1
	fi
done
awk -F: -v OFS=: -v n=%[1]s -v i=%[2]s -v og="$og" '$1==n{$3=i; if ($4==og) $4=i} {print}' "$r/etc/passwd" >"$r/etc/passwd.new"
awk -F: -v OFS=: -v n=%[1]s -v i=%[2]s '$1==n{$3=i} {print}' "$r/etc/group" >"$r/etc/group.new"
cat "$r/etc/passwd.new" >"$r/etc/passwd"; cat "$r/etc/group.new" >"$r/etc/group"
rm "$r/etc/passwd.new" "$r/etc/group.new"
if [ "$ou" != %[2]s ]; then find "$r" -xdev -uid "$ou" -exec chown -h %[2]s {} +; fi
if [ "$og" != %[2]s ]; then find "$r" -xdev -gid "$og" -exec chgrp -h %[2]s {} +; fi
`, n, i)
}

// AddUserHook is a customize hook (Recipe.Hooks) that adds the system
// user and group name with id id, for packages (the -core ones) whose
// postinst makes no user.
func AddUserHook(name string, id int, home string) string {
	return fmt.Sprintf(`set -eu
r=$1
echo '%[1]s:x:%[2]d:%[2]d::%[3]s:/usr/sbin/nologin' >>"$r/etc/passwd"
echo '%[1]s:x:%[2]d:' >>"$r/etc/group"
if [ -e "$r/etc/shadow" ]; then echo '%[1]s:!*:19000::::::' >>"$r/etc/shadow"; fi
if [ -e "$r/etc/gshadow" ]; then echo '%[1]s:!::' >>"$r/etc/gshadow"; fi
`, name, id, home)
}
