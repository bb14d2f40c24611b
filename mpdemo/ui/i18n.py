"""Every string the UI shows, in English and Spanish, and the engine's messages in Spanish.

`t(key, lang, **args)` renders a UI string; `message(key, args, lang)` renders an engine message
key (mpdemo/messages.py) in the page's language. Adding a language = one more table pair here.
"""

from __future__ import annotations

from typing import Any

from ..messages import EN as EN_MESSAGES
from ..messages import render
from .i18n_teach import TEACH_EN, TEACH_ES

LANGS = ("en", "es")
DEFAULT_LANG = "en"
LANG_CHOICES = [("English", "en"), ("Español", "es")]

EN: dict[str, str] = {
    # page
    "page_title": "mpdemo: mixed precision, measured",
    "intro": (
        "## Mixed precision, measured\n"
        "Train the same small model in **fp32**, **fp16** and **bf16** with three backends "
        "(a plain PyTorch AMP loop, Hugging Face Accelerate, the Trainer) and watch loss, loss "
        "scale and speed side by side. Everything shown is what the runs report."
    ),
    "lang_label": "Language",
    "tab_train": "Train",
    # model / data
    "model_label": "Model",
    "model_info": (
        "Built-ins train offline. You can also type a Hugging Face Hub id (owner/name) or a "
        "local folder saved with save_pretrained."
    ),
    "params_approx": "~{params} params",
    "needs_internet": "needs internet",
    "dataset_label": "Dataset",
    "dataset_info": "The bundled reviews work offline; Hub datasets need internet.",
    "train_slice_label": "Train slice",
    "eval_slice_label": "Eval slice",
    "slice_info": "datasets split syntax: train[:2000], train[:10%], validation[100:600]",
    "slice_rows": "{rows:,} of {total:,} rows",
    "slice_rows_clamped": "{rows:,} of {total:,} rows (asked for more than the split has)",
    "slice_unknown": "row count known once the data is loaded",
    "slice_bad": "not a valid slice (splits: {splits})",
    "slice_none": "amp-mlp trains on random tensors (the AMP recipe's data): slices do not apply",
    "slice_preview_train": "Train: {text}",
    "slice_preview_eval": "Eval: {text}",
    # grid
    "backends_label": "Backends",
    "backends_info": "each ticked backend trains once per ticked precision, one after another",
    "precisions_label": "Precisions",
    "precision_info_cpu": (
        "Training on the CPU: most CPUs have no fast fp16 (it is emulated, often many times "
        "slower) and bf16 is the CPU's fast mixed precision. Tick fp16 to measure this CPU; "
        "fp16 still runs."
    ),
    "precision_info_gpu": (
        "fp16 uses a loss scaler (GradScaler); bf16 has fp32's range and needs none."
    ),
    "fp16_probe": (
        "**fp16 on this CPU:** a quick matmul probe ran fp16 **{ratio:.0f}x slower** than fp32, "
        "so expect the fp16 runs to take roughly that much longer per step. They still run; "
        "bf16 is the fast path here."
    ),
    "fp16_probe_fast": (
        "fp16 on this CPU: the quick matmul probe ran fp16 at {ratio:.1f}x the time of fp32: "
        "this CPU has fast fp16 instructions (AVX512-FP16 or AMX-FP16), unlike most."
    ),
    "fp16_probe_running": "measuring how fast this CPU runs fp16...",
    "device_label": "Device",
    "device_info": "auto picks the GPU when there is one",
    "device_auto": "auto",
    "steps_label": "Steps",
    "batch_label": "Batch size",
    "lr_label": "Learning rate",
    "seed_label": "Seed",
    "advanced_label": "Advanced: loss scaling (fp16)",
    "loss_scaling_label": "Loss scaling",
    "loss_scaling_info": "fp16 only: a GradScaler multiplies the loss so small gradients survive",
    "init_scale_label": "Initial scale",
    "growth_interval_label": "Growth interval",
    "growth_interval_info": (
        "the scale doubles after this many clean steps (2000 = PyTorch's default); lower it, "
        "e.g. to 10, to watch it grow and back off in a short run"
    ),
    "compare_scaling_label": "fp16 also without loss scaling",
    "compare_scaling_info": (
        "each fp16 run twice: scaled, and unscaled (labelled S=1), to see underflow side by side"
    ),
    # actions and status
    "start_btn": "Train",
    "stop_btn": "Stop",
    "status_idle": "Ready: press **Train** to run the comparison.",
    "status_preparing": "Run {i} of {n}: preparing **{label}**...",
    "status_running": ("Run {i} of {n}: **{label}**, step {step} of {steps}, about {left} left"),
    "status_stopping": "Stopping after the current step...",
    "status_done": "Done: {n} runs ({detail}).",
    "status_done_one": "Done: 1 run ({detail}).",
    "status_stopped": (
        "Stopped: **{label}** stopped at step {step} of {steps}; what was measured is kept."
    ),
    "status_stopped_plain": "Stopped; what was measured is kept.",
    "status_run_failed": "**{label}** failed: {error}",
    "status_queued": "Waiting for another training to finish...",
    "time_s": "{s} s",
    "time_min": "{m} min {s} s",
    # plots
    "loss_plot": "Loss",
    "scale_plot": "Loss scale (log2)",
    "time_plot": "Step time (ms)",
    "throughput_plot": "Samples per second",
    "x_step": "step",
    "y_loss": "loss",
    "y_scale": "log2(loss scale)",
    "y_ms": "ms per step",
    "y_samples": "samples/s",
    "scale_caption": (
        "Only fp16 runs with loss scaling have a scale. Red ticks mark skipped steps "
        "(inf/NaN gradients: the step is skipped and the scale halves)."
    ),
    "skipped_suffix": "skipped",
    # summary
    "summary_label": "Summary (one row per finished run)",
    "col_run": "run",
    "col_status": "status",
    "col_speedup": "vs fp32 (×)",
    "col_samples": "samples/s",
    "col_step_ms": "step ms",
    "col_loss": "loss",
    "col_eval_acc": "eval acc.",
    "col_eval_loss": "eval loss",
    "col_effective": "ran as",
    "col_requested": "requested",
    "col_skipped": "skipped",
    "col_scale": "scale",
    "col_peak": "peak MB",
    "col_tokens": "tokens/s",
    "col_params": "params",
    "col_steps": "steps",
    "col_device": "device",
    "col_backend": "backend",
    "col_precision": "precision",
    "col_warnings": "warnings",
    "st_completed": "completed",
    "st_stopped": "stopped",
    "st_diverged": "diverged",
    "st_failed": "failed",
    # downloads
    "downloads_label": "Downloads",
    "csv_btn": "Steps (CSV)",
    "json_btn": "Runs (JSON)",
    "script_run_label": "Run to reproduce",
    "script_btn": "Python script",
    "script_missing": "script export is not available in this version",
}

ES: dict[str, str] = {
    "page_title": "mpdemo: precisión mixta, medida",
    "intro": (
        "## Precisión mixta, medida\n"
        "Entrena el mismo modelo pequeño en **fp32**, **fp16** y **bf16** con tres backends "
        "(un bucle simple de PyTorch AMP, Hugging Face Accelerate, el Trainer) y compara "
        "pérdida, escala de pérdida y velocidad. Todo lo que se ve es lo que informan las "
        "ejecuciones."
    ),
    "lang_label": "Idioma",
    "tab_train": "Entrenar",
    "model_label": "Modelo",
    "model_info": (
        "Los integrados entrenan sin conexión. También puedes escribir un id del Hub de "
        "Hugging Face (dueño/nombre) o una carpeta local guardada con save_pretrained."
    ),
    "params_approx": "~{params} parámetros",
    "needs_internet": "necesita internet",
    "dataset_label": "Conjunto de datos",
    "dataset_info": "Las reseñas incluidas funcionan sin conexión; los del Hub necesitan internet.",
    "train_slice_label": "Porción de entrenamiento",
    "eval_slice_label": "Porción de evaluación",
    "slice_info": "sintaxis de splits de datasets: train[:2000], train[:10%], validation[100:600]",
    "slice_rows": "{rows:,} de {total:,} filas",
    "slice_rows_clamped": "{rows:,} de {total:,} filas (se pidieron más de las que hay)",
    "slice_unknown": "el número de filas se sabrá al cargar los datos",
    "slice_bad": "no es una porción válida (splits: {splits})",
    "slice_none": (
        "amp-mlp entrena con tensores aleatorios (los datos de la receta de AMP): las porciones "
        "no se aplican"
    ),
    "slice_preview_train": "Entrenamiento: {text}",
    "slice_preview_eval": "Evaluación: {text}",
    "backends_label": "Backends",
    "backends_info": "cada backend marcado entrena una vez por cada precisión marcada, una tras otra",
    "precisions_label": "Precisiones",
    "precision_info_cpu": (
        "Entrenando en la CPU: la mayoría de las CPU no tienen fp16 rápida (se emula, a menudo "
        "muchas veces más lenta) y bf16 es la precisión mixta rápida de la CPU. Marca fp16 para "
        "medir esta CPU; fp16 se ejecuta igualmente."
    ),
    "precision_info_gpu": (
        "fp16 usa un escalador de pérdida (GradScaler); bf16 tiene el rango de fp32 y no lo necesita."
    ),
    "fp16_probe": (
        "**fp16 en esta CPU:** una prueba rápida de multiplicación de matrices fue **{ratio:.0f} "
        "veces más lenta** en fp16 que en fp32; espera que cada paso de las ejecuciones fp16 "
        "tarde más o menos eso. Se ejecutan igualmente; bf16 es la vía rápida aquí."
    ),
    "fp16_probe_fast": (
        "fp16 en esta CPU: la prueba rápida tardó {ratio:.1f} veces lo que tarda fp32: esta "
        "CPU tiene instrucciones fp16 rápidas (AVX512-FP16 o AMX-FP16), a diferencia de la "
        "mayoría."
    ),
    "fp16_probe_running": "midiendo la velocidad de fp16 en esta CPU...",
    "device_label": "Dispositivo",
    "device_info": "auto elige la GPU si hay una",
    "device_auto": "automático",
    "steps_label": "Pasos",
    "batch_label": "Tamaño de lote",
    "lr_label": "Tasa de aprendizaje",
    "seed_label": "Semilla",
    "advanced_label": "Avanzado: escalado de pérdida (fp16)",
    "loss_scaling_label": "Escalado de pérdida",
    "loss_scaling_info": (
        "solo fp16: un GradScaler multiplica la pérdida para que los gradientes pequeños sobrevivan"
    ),
    "init_scale_label": "Escala inicial",
    "growth_interval_label": "Intervalo de crecimiento",
    "growth_interval_info": (
        "la escala se duplica tras este número de pasos sin problemas (2000 = valor por defecto "
        "de PyTorch); bájalo, p. ej. a 10, para verla crecer y retroceder en una ejecución corta"
    ),
    "compare_scaling_label": "fp16 también sin escalado de la pérdida",
    "compare_scaling_info": (
        "cada ejecución fp16 dos veces: con escalado y sin él (marcada S=1), para ver el "
        "underflow lado a lado"
    ),
    "start_btn": "Entrenar",
    "stop_btn": "Detener",
    "status_idle": "Listo: pulsa **Entrenar** para lanzar la comparación.",
    "status_preparing": "Ejecución {i} de {n}: preparando **{label}**...",
    "status_running": (
        "Ejecución {i} de {n}: **{label}**, paso {step} de {steps}, quedan unos {left}"
    ),
    "status_stopping": "Deteniendo tras el paso actual...",
    "status_done": "Terminado: {n} ejecuciones ({detail}).",
    "status_done_one": "Terminado: 1 ejecución ({detail}).",
    "status_stopped": (
        "Detenido: **{label}** se detuvo en el paso {step} de {steps}; se conserva lo medido."
    ),
    "status_stopped_plain": "Detenido; se conserva lo medido.",
    "status_run_failed": "**{label}** falló: {error}",
    "status_queued": "Esperando a que termine otro entrenamiento...",
    "time_s": "{s} s",
    "time_min": "{m} min {s} s",
    "loss_plot": "Pérdida",
    "scale_plot": "Escala de pérdida (log2)",
    "time_plot": "Tiempo por paso (ms)",
    "throughput_plot": "Muestras por segundo",
    "x_step": "paso",
    "y_loss": "pérdida",
    "y_scale": "log2(escala de pérdida)",
    "y_ms": "ms por paso",
    "y_samples": "muestras/s",
    "scale_caption": (
        "Solo las ejecuciones fp16 con escalado de pérdida tienen escala. Las marcas rojas "
        "señalan pasos omitidos (gradientes inf/NaN: el paso se omite y la escala se reduce a "
        "la mitad)."
    ),
    "skipped_suffix": "omitido",
    "summary_label": "Resumen (una fila por ejecución terminada)",
    "col_run": "ejecución",
    "col_status": "estado",
    "col_speedup": "vs fp32 (×)",
    "col_samples": "muestras/s",
    "col_step_ms": "ms/paso",
    "col_loss": "pérdida",
    "col_eval_acc": "exactitud",
    "col_eval_loss": "pérdida eval",
    "col_effective": "corrió en",
    "col_requested": "pedido",
    "col_skipped": "omitidos",
    "col_scale": "escala",
    "col_peak": "pico MB",
    "col_tokens": "tokens/s",
    "col_params": "parámetros",
    "col_steps": "pasos",
    "col_device": "dispositivo",
    "col_backend": "backend",
    "col_precision": "precisión",
    "col_warnings": "avisos",
    "st_completed": "completada",
    "st_stopped": "detenida",
    "st_diverged": "divergió",
    "st_failed": "falló",
    "downloads_label": "Descargas",
    "csv_btn": "Pasos (CSV)",
    "json_btn": "Ejecuciones (JSON)",
    "script_run_label": "Ejecución a reproducir",
    "script_btn": "Script de Python",
    "script_missing": "la exportación de scripts no está disponible en esta versión",
}

# The engine's message keys (mpdemo.messages.EN), same `{fields}` and format specs.
# The teaching tabs keep their strings in their own file; one table for the page.
APP_KEYS = frozenset(EN)  # the Train tab's own keys, which the teaching keys must not replace
EN.update(TEACH_EN)
ES.update(TEACH_ES)

ES_MESSAGES: dict[str, str] = {
    "unknown_choice": "{field} debe ser uno de {allowed}; se recibió {value!r}",
    "bad_number": "{field} debe ser {rule}; se recibió {value!r}",
    "empty_choice": "elige al menos un valor de {field} ({allowed})",
    "text_too_long": "{field} tiene {length} caracteres; se admiten como máximo {limit}",
    "bad_slice": (
        "{value!r} no es una porción válida: usa la sintaxis de splits de datasets, p. ej. "
        "'train[:2000]', 'train[:10%]' o 'validation[100:600]' (splits aquí: {splits})"
    ),
    "empty_slice": "la porción {value!r} no selecciona filas (el split {split!r} tiene {rows} filas)",
    "unknown_split": "el conjunto de datos no tiene el split {split!r}; tiene {splits}",
    "unknown_model": (
        "{value!r} no es un modelo integrado, un id del Hub de Hugging Face (dueño/nombre) ni "
        "una carpeta local de modelo; integrados: {allowed}"
    ),
    "unknown_dataset": (
        "{value!r} no es un conjunto de datos conocido, un id de datos del Hub ni una carpeta "
        "local; conocidos: {allowed}"
    ),
    "hub_unreachable": (
        "no se puede acceder al Hub de Hugging Face desde esta máquina; elige un modelo "
        "integrado o una carpeta local (se pidió {value!r})"
    ),
    "hub_not_found": "{value!r} no se encontró en el Hub de Hugging Face ({detail})",
    "bad_hub_id": "{value!r} no es un id válido del Hub de Hugging Face ({detail})",
    "local_paths_off": (
        "las rutas locales están desactivadas en este servidor (modo alojado); elige un modelo "
        "integrado o del Hub"
    ),
    "path_not_found": "la carpeta {value!r} no existe",
    "path_outside_roots": "{value!r} está fuera de las carpetas que este servidor puede leer ({roots})",
    "not_a_model": "{value!r} no es una carpeta de modelo guardada con save_pretrained ({detail})",
    "not_a_dataset": "{value!r} no es un conjunto de datos guardado con save_to_disk ({detail})",
    "model_too_big": (
        "{value!r} tiene {params:,} parámetros; este servidor admite como máximo {limit:,} "
        "(MPDEMO_MAX_PARAMS)"
    ),
    "task_mismatch": (
        "el modelo {model!r} ({model_task}) no puede entrenar con {dataset!r} ({data_task})"
    ),
    "no_text_column": "el conjunto {value!r} no tiene columna de texto (columnas: {columns})",
    "no_label_column": "el conjunto {value!r} no tiene columna de etiquetas (columnas: {columns})",
    "no_cuda": "se pidió --device cuda, pero esta máquina no tiene GPU CUDA (torch no ve ninguna)",
    "no_mps": "se pidió --device mps, pero esta máquina no tiene GPU de Apple",
    "no_bf16_gpu": "bf16 necesita una GPU Ampere o más reciente; {gpu} no lo es: usa fp16 o fp32",
    "busy": "hay otro entrenamiento en marcha en este proceso; espera o pulsa Detener",
    "torch_single_process": (
        "el backend torch es de un solo proceso; lanzado con {n} procesos entrenaría {n} "
        "copias separadas. Usa --backend accelerate o trainer con accelerate launch"
    ),
    "load_failed": "no se pudo cargar {value!r}: {detail}",
    "fp16_not_applied": (
        "se pidió fp16 y se ejecutó en {effective}: {backend} no aplica autocast fp16 en "
        "{device}, así que esta ejecución muestra la velocidad de fp32 y no escala la pérdida"
    ),
    "dtype_mismatch": "se pidió {requested}, pero las multiplicaciones del modelo dieron {effective}",
    "cpu_fp16_slow": (
        "esta CPU no tiene vía rápida para fp16: una prueba rápida de matrices fue {ratio:.0f} "
        "veces más lenta en fp16 que en fp32; bf16 es la precisión mixta rápida aquí"
    ),
    "cpu_bf16_slow": (
        "esta CPU no tiene vía rápida para bf16 (prueba: bf16 tarda {ratio:.1f} veces lo que "
        "fp32), así que aquí bf16 ahorra memoria pero no tiempo"
    ),
    "mps_autocast_off": (
        "esta versión de torch no puede aplicar autocast {precision} en MPS de Apple; la "
        "ejecución es fp32"
    ),
    "no_scaler": (
        "fp16 sin escalado de pérdida: los gradientes pequeños se vuelven cero (underflow) y "
        "los grandes desbordan; nada protege contra ninguno de los dos"
    ),
    "diverged_nonfinite": (
        "la pérdida se volvió {loss} en el paso {step}: la ejecución divergió (pesos o "
        "gradientes desbordados); se conserva la curva hasta ese punto"
    ),
    "diverged_exploded": (
        "la pérdida se disparó de {first:.3g} a {loss:.3g} en el paso {step}: la ejecución "
        "divergió (¿tasa de aprendizaje demasiado alta?); se conserva la curva hasta ese punto"
    ),
    "stopped_by_user": "detenida tras {step} de {steps} pasos",
    "slice_clamped": "{slice} pedía más filas de las que tiene el split; se usaron {rows} filas",
    "distributed": "entrenado en {n} procesos; el lote global de {batch} se repartió entre ellos",
    "failed": "la ejecución falló: {detail}",
}

_UI = {"en": EN, "es": ES}
_MESSAGES: dict[str, dict[str, str]] = {"en": EN_MESSAGES, "es": ES_MESSAGES}


def norm_lang(lang: str | None) -> str:
    """A supported language code; anything else falls back to English."""
    return lang if lang in _UI else DEFAULT_LANG


def t(key: str, lang: str | None = DEFAULT_LANG, **args: Any) -> str:
    """A UI string in `lang` (English when missing), filled with `args`."""
    table = _UI[norm_lang(lang)]
    template = table.get(key) or EN.get(key) or key
    if not args:
        return template
    try:
        return template.format(**args)
    except (KeyError, IndexError, ValueError):
        return template


def message(key: str, args: dict[str, Any], lang: str | None = DEFAULT_LANG) -> str:
    """An engine message key rendered in `lang` (mpdemo.messages.render does the filling)."""
    return render(key, args, _MESSAGES[norm_lang(lang)])


def error_text(err: BaseException, lang: str | None = DEFAULT_LANG) -> str:
    """The translated text of an MpdemoError (or str(err) for anything else)."""
    note = getattr(err, "note", None)
    if note is None:
        return str(err)
    return message(note.key, dict(note.args), lang)


def lang_from_header(accept_language: str | None) -> str:
    """The best supported language in an Accept-Language header (q-weighted)."""
    best, best_q = DEFAULT_LANG, -1.0
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        code = tag.strip().lower().split("-")[0]
        q = 1.0
        for p in params.split(";"):
            name, _, value = p.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        q -= i * 1e-6  # equal weights: earlier wins
        if code in _UI and q > best_q:
            best, best_q = code, q
    return best
