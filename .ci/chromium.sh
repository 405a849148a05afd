# shellcheck shell=bash
# Headless Chromium for the review page's browser tests (tests/report/test_browser.py).
#
#   source .ci/chromium.sh     # installs chromium + chromium-driver from Debian's packages when
#                              # /usr/bin/chromium or /usr/bin/chromedriver is missing, checks that
#                              # both run, and exports STACKCHECK_TEST_CHROMIUM / _CHROMEDRIVER
#
# Safe to source from a `set -euo pipefail` script: every step checks itself and the script
# returns non-zero (never exits) when the browser cannot be had. Under CI=true the browser test
# fails (never skips) without it. Running it with `bash` instead of `source` prints the versions.

stackcheck_chromium_setup() {
  local browser=/usr/bin/chromium driver=/usr/bin/chromedriver
  if [ ! -x "$browser" ] || [ ! -x "$driver" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "chromium.sh: installing chromium and chromium-driver from Debian's packages" >&2
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver fonts-dejavu-core >/dev/null || return 1
    else
      echo "chromium.sh: chromium or chromedriver is missing and this user cannot apt-get install it" >&2
      return 1
    fi
  fi
  local bv dv
  bv=$("$browser" --headless --no-sandbox --disable-gpu --version 2>/dev/null) || {
    echo "chromium.sh: $browser does not run" >&2; return 1; }
  dv=$("$driver" --version 2>/dev/null) || { echo "chromium.sh: $driver does not run" >&2; return 1; }
  export STACKCHECK_TEST_CHROMIUM="$browser"
  export STACKCHECK_TEST_CHROMEDRIVER="$driver"
  echo "chromium.sh: $bv; $dv" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then  # executed, not sourced
  stackcheck_chromium_setup || exit 1
else
  stackcheck_chromium_setup
fi
