#!/bin/sh
# Installs Coxswain for you alone (no root): the bundle into ~/.local/opt/coxswain, `cox` and `coxswain` into
# ~/.local/bin, a menu entry and its icon. `~/.local/opt/coxswain/uninstall.sh` removes exactly these again; your
# data (~/.local/share/coxswain) stays.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix="${XDG_DATA_HOME:-$HOME/.local/share}"
opt="$HOME/.local/opt/coxswain"
bin="$HOME/.local/bin"
if [ -e "$opt/uninstall.sh" ]; then sh "$opt/uninstall.sh"; fi  # an older version goes first
mkdir -p "$HOME/.local/opt" "$bin" "$prefix/applications" "$prefix/icons/hicolor/scalable/apps"
cp -a "$here/coxswain" "$opt"
ln -sf "$opt/cox" "$bin/cox"
ln -sf "$opt/coxswain" "$bin/coxswain"
cp "$here/coxswain.svg" "$prefix/icons/hicolor/scalable/apps/coxswain.svg"
cat > "$prefix/applications/coxswain.desktop" <<ENTRY
[Desktop Entry]
Type=Application
Name=Coxswain
Comment=Your team's coding agents, on your laptop
Exec=$opt/coxswain
Icon=coxswain
Terminal=false
Categories=Development;
ENTRY
cat > "$opt/uninstall.sh" <<UNINSTALL
#!/bin/sh
rm -f "$bin/cox" "$bin/coxswain" "$prefix/applications/coxswain.desktop" \\
      "$prefix/icons/hicolor/scalable/apps/coxswain.svg"
rm -rf "$opt"
echo "Coxswain is uninstalled; your data in ${XDG_DATA_HOME:-\$HOME/.local/share}/coxswain is still there."
UNINSTALL
echo "Coxswain is installed: start it from your menu, or run $bin/coxswain"
