# datasolver competition image. Run with no arguments: reads /input, writes /output, logs to /logs.
#   docker build -t datasolver .
#   docker run --rm -v "$PWD/input:/input:ro" -v "$PWD/output:/output" -v "$PWD/logs:/logs" \
#     -e MODEL_API_URL -e MODEL_API_KEY -e MODEL_NAME datasolver
# Everything is installed at build time; nothing is downloaded when the container runs.

# ---- build: wheels for datasolver and every dependency ----
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir --upgrade pip \
 && pip wheel --no-cache-dir --wheel-dir /wheels ".[video]"

# ---- run: install from the wheels only, then no network is needed ----
FROM python:3.11-slim
COPY --from=build /wheels /wheels
# The demo (bundled tasks, scripted model, real client/agent/tools/sandbox) fails the build, not
# the competition run, if anything the run needs is missing from the image.
RUN pip install --no-cache-dir --no-index --find-links=/wheels "datasolver[video]" \
 && rm -rf /wheels \
 && mkdir -p /input /output /logs \
 && datasolver demo --output /tmp/demo-check/output \
 && rm -rf /tmp/demo-check /tmp/datasolver-*

# The competition's folders; the time budget leaves an hour of the 12 h window for the last
# tasks' fallback runs and start-up; a model server that cannot be reached at start (it may be
# starting beside this container) is waited for up to 10 minutes before the run gives up.
# Override any of them with `docker run -e NAME=value`.
ENV INPUT_DIR=/input \
    OUTPUT_DIR=/output \
    LOGS_DIR=/logs \
    DATASOLVER_TIME_BUDGET=11h \
    DATASOLVER_PREFLIGHT_WAIT=10m \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /tmp
ENTRYPOINT ["datasolver"]
CMD ["run"]
