# README's two commands: `make demo` and `make test`. Both install liblmdb-dev when
# pkg-config cannot find lmdb (Debian's package, as CI's fresh machine needs).
SWIFT ?= swift
DEMO_DB ?= demo.lmdb

.PHONY: deps build release demo test bench openapi clean

deps:
	@pkg-config --exists lmdb || { \
	  echo "installing liblmdb-dev and lmdb-utils…"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq liblmdb-dev lmdb-utils; }
	@command -v mdb_stat >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq lmdb-utils || true; }

build: deps
	$(SWIFT) build

# The CLI as shipped: release, with the Swift runtime and Foundation linked statically, so
# each `ledger` process skips loading them (~9 ms of every command's start-up on the
# 2-core VM; Benchmarks/README.md). Output: .build-static/release/ledger.
release: deps
	$(SWIFT) build -c release --product ledger --static-swift-stdlib --scratch-path .build-static
	@echo "built .build-static/release/ledger"

demo: build
	$$($(SWIFT) build --show-bin-path)/ledger demo --fresh --db $(DEMO_DB)
	@echo
	@echo "The ledger is in $(DEMO_DB). Try: $$($(SWIFT) build --show-bin-path)/ledger show of-05 --db $(DEMO_DB)"

# IndependentVerifierTests needs python3's `cryptography` (it fails, never skips, without it).
test: deps
	@python3 -c "import cryptography" 2>/dev/null || python3 -m pip install -q "cryptography>=3.4"
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	@python3 -c "import jsonschema" 2>/dev/null || python3 -m pip install -q "jsonschema>=4.18"
	python3 Specs/tools/validate.py

# Specs/openapi.yaml compiled into `ledger serve` (GET /openapi.yaml): run after every change
# to the spec; OpenAPIDocumentTests fails while the embedded copy differs.
openapi:
	python3 Specs/tools/embed_openapi.py

# The benchmark suite (a separate package, so `swift test` never builds it): engine vs raw
# LMDB and SQLite in one run; table on stdout, JSON in Benchmarks/results/latest.json.
bench: deps
	$(MAKE) -C Benchmarks bench

clean:
	rm -rf .build .build-static $(DEMO_DB) $(DEMO_DB)-lock
