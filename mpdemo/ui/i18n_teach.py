"""Strings of the teaching tabs (Number formats, Underflow lab, Code, Why) in English and Spanish.

Merged into mpdemo/ui/i18n.py's EN/ES tables by the app. Spanish follows the course's own
vocabulary (seeds/000): "precisión mixta", "escalado de la pérdida", "underflow" as is.
`code_change_<backend>_<i>` keys mirror mpdemo.codegen.CHANGES[backend][i] word for word in
English; teach_tabs falls back to codegen's English when they drift (a test catches that).
"""

from __future__ import annotations

TEACH_EN: dict[str, str] = {
    # tab titles
    "tab_formats": "Number formats",
    "tab_underflow": "Underflow lab",
    "tab_code": "Code",
    "tab_why": "Why",
    # --- Number formats ---------------------------------------------------------------------
    "nf_intro": (
        "### How fp32, fp16 and bf16 store a number\n"
        "Type a number and see the bits each format keeps: **sign**, **exponent** (the range) "
        "and **mantissa** (the precision). The stored value is what the format can actually "
        "hold; the error is how far it is from what you typed."
    ),
    "nf_value_label": "Number",
    "nf_value_info": "decimal or scientific notation: 0.1, 1e-8, 65504, 70000, inf",
    "nf_legend": "sign · exponent · mantissa",
    "nf_col_format": "format",
    "nf_col_bits": "bits (sign · exponent · mantissa)",
    "nf_col_stored": "stored value",
    "nf_col_abs_err": "absolute error",
    "nf_col_rel_err": "relative error",
    "nf_col_class": "class",
    "nf_cat_zero": "zero",
    "nf_cat_subnormal": "subnormal",
    "nf_cat_normal": "normal",
    "nf_cat_inf": "infinity",
    "nf_cat_nan": "not a number (NaN)",
    "nf_overflowed": "overflow: too large, became infinity",
    "nf_underflowed": "underflow: too small, became 0",
    "nf_bad_input": (
        "Not a number: use decimal or scientific notation such as 0.1, -2.5e-8, 65504, inf or nan."
    ),
    "nf_table_label": "Range and precision of each format (computed with torch.finfo)",
    "nf_th_format": "format",
    "nf_th_bits": "bits",
    "nf_th_exp_bits": "exponent bits",
    "nf_th_man_bits": "mantissa bits",
    "nf_th_max": "largest value",
    "nf_th_min_normal": "smallest normal",
    "nf_th_min_subnormal": "smallest subnormal",
    "nf_th_eps": "machine epsilon",
    "nf_scale_title": (
        "### Loss scaling, one number at a time\n"
        "A gradient of 1e-8 is below fp16's smallest subnormal (2^-24 ≈ 6e-8): stored in fp16 "
        "it becomes 0. Multiply it by a loss scale S first and it survives; multiply too much "
        "and it passes 65504 and becomes infinity. Move the slider."
    ),
    "nf_small_label": "Small value (a gradient)",
    "nf_scale_label": "Loss scale S = 2^k: choose k",
    "nf_scale_info": "GradScaler starts at 2^16 = 65536",
    "nf_sc_value": "value x",
    "nf_sc_scale": "loss scale S",
    "nf_sc_scaled": "x × S (exact)",
    "nf_sc_fp16": "x × S stored in fp16",
    "nf_sc_recovered": "back to fp32: ÷ S",
    "nf_sc_rel_err": "relative error after the round trip",
    "nf_sc_bf16": "x stored in bf16 (no scaling)",
    "nf_v_zero": "**Flushed to zero**: in fp16 this gradient is lost. Raise S.",
    "nf_v_subnormal": (
        "**Survives as a subnormal**: not zero, but fp16 keeps fewer significant bits here "
        "(relative error {err})."
    ),
    "nf_v_normal": "**Survives** as a normal fp16 number (relative error {err}).",
    "nf_v_inf": (
        "**Overflow**: x × S passed 65504 and became infinity. GradScaler would skip this "
        "step and halve S."
    ),
    "nf_v_nan": "**NaN**: not a number in any format.",
    "nf_window_zero": "flushes to zero up to S = 2^{k}",
    "nf_window_sub": "subnormal for S = 2^{a} to 2^{b}",
    "nf_window_normal": "a normal fp16 number for S = 2^{a} to 2^{b}",
    "nf_window_inf": "overflows from S = 2^{k}",
    "nf_window": "For x = {x} (S from 2^0 to 2^{kmax}): {parts}.",
    # --- Underflow lab ----------------------------------------------------------------------
    "uf_intro": (
        "### Underflow lab: your model's gradients against fp16's range\n"
        "One real forward and backward pass in fp32 on the first training batch of the chosen "
        "model. The histograms show where the gradient magnitudes lie (log2 scale) and the "
        "coloured bands show what fp16 would do to them: values below 2^-24 **flush to zero** "
        "(underflow), values between 2^-24 and 2^-14 are **subnormal** (precision lost), values "
        "above 65504 **overflow**. Multiplying the loss by S multiplies every gradient by S and "
        "moves the histogram to the right. This is the figure of Micikevicius et al. (2018), "
        "rebuilt on your model."
    ),
    "uf_model_label": "Model",
    "uf_batch_label": "Batch size",
    "uf_seed_label": "Seed",
    "uf_run_btn": "Compute gradients",
    "uf_scale_label": "Loss scale S = 2^k: choose k",
    "uf_scale_info": "1 to 2^24; GradScaler starts at 2^16",
    "uf_status_idle": (
        "Press **Compute gradients**: one backward pass, a few seconds for the small models "
        "(amp-mlp, 50M parameters, takes longer)."
    ),
    "uf_status": (
        "**{model}**: {params} parameters, one batch of {batch}, fp32 loss {loss}. Activation "
        "gradients: the output gradient of each of the {layers} Linear layers."
    ),
    "uf_chart_activation": "Activation gradients",
    "uf_chart_weight": "Weight gradients",
    "uf_axis_x": "log2 |gradient × S|",
    "uf_axis_y": "share of non-zero values",
    "uf_band_zero": "flush to 0",
    "uf_band_sub": "subnormal",
    "uf_band_normal": "normal fp16",
    "uf_band_over": "overflow",
    "uf_bar_tip": "2^{lo} to 2^{hi}: {n} values ({share})",
    "uf_clamped": "values beyond the axis are drawn in the end bars",
    "uf_table_label": "Shares of non-zero gradient values in fp16",
    "uf_col_kind": "gradients",
    "uf_col_nonzero": "non-zero values",
    "uf_col_zero1": "flush to zero, S = 1",
    "uf_col_zeroS": "flush to zero, S",
    "uf_col_subS": "subnormal, S",
    "uf_col_overS": "overflow, S",
    "uf_kind_activation": "activation",
    "uf_kind_weight": "weight",
    "uf_reading": (
        "At S = 2^{k} = {scale}: **{az}** of the activation gradients and **{wz}** of the weight "
        "gradients would flush to zero in fp16 (without scaling: {az1} and {wz1}); {ao} and "
        "{wo} would overflow."
    ),
    "uf_paper": (
        "In the paper's SSD detector most activation gradients were below fp16's range: "
        "without loss scaling it diverged; with S = 8 it matched fp32 (77.1 vs 76.9 mAP). "
        "Shares are exact counts: they equal casting (g × S) to fp16 and counting zeros."
    ),
    # --- Code -------------------------------------------------------------------------------
    "code_intro": (
        "### The code behind each backend\n"
        "Left: the script mpdemo runs for these settings (copy it and run it from the "
        "repository). Right: the course's listing. Below: what had to change for today's "
        "libraries."
    ),
    "code_backend_label": "Backend",
    "code_precision_label": "Precision",
    "code_model_label": "Model",
    "code_steps_label": "Steps",
    "code_batch_label": "Batch size",
    "code_scaling_label": "Loss scaling (fp16)",
    "code_growth_label": "Growth interval",
    "code_ours_label": "What mpdemo runs (these settings)",
    "code_course_label": "The course's listing",
    "code_changes_title": "What changed for today's libraries",
    "code_bad_settings": "These settings are not valid: {error}",
    "code_change_torch_0": (
        "torch.cuda.amp.GradScaler() → torch.amp.GradScaler(device_type): one API for GPU and CPU"
    ),
    "code_change_torch_1": (
        "enabled=(precision == 'fp16'): fp32 and bf16 run the same loop with a no-op scaler"
    ),
    "code_change_torch_2": "device_type comes from the model's device, not a hard-coded 'cpu'",
    "code_change_torch_3": (
        "on most CPUs fp16 autocast is many times slower than fp32; bf16 is the CPU's fast path"
    ),
    "code_change_accelerate_0": (
        "Accelerator(mixed_precision='fp16') on a CPU raises nothing but autocasts nothing: "
        "the run is plain fp32 (accelerate 1.15)"
    ),
    "code_change_accelerate_1": "GradScalerKwargs sets the scaler's init_scale and growth_interval",
    "code_change_accelerate_2": (
        "accelerator.scaler.get_scale() and accelerator.optimizer_step_was_skipped show the scale"
    ),
    "code_change_trainer_0": (
        "evaluation_strategy → eval_strategy (transformers 5 removed the old name)"
    ),
    "code_change_trainer_1": (
        "TrainingArguments(fp16=True) on a CPU runs in fp32; bf16=True on a CPU needs use_cpu=True"
    ),
    "code_change_trainer_2": (
        "max_steps instead of epochs, so every backend trains the same number of steps"
    ),
    # --- Why --------------------------------------------------------------------------------
    "why_autocast": (
        "### What autocast changes\n"
        "Inside `torch.autocast(...)`, operations that gain from low precision (matrix "
        "multiplications, linear layers, convolutions) run in fp16 or bf16; operations that "
        "need range or precision (softmax, losses, normalizations, sums) stay in fp32. The "
        "weights stay fp32 (the *master copy*) and the optimizer updates them in fp32; only "
        "the copies fed to each matmul are cast. The backward pass runs each operation in the "
        "dtype its forward used. Outside the `with` block nothing changes."
    ),
    "why_scale": (
        "### Why the scale starts at 65536 and moves\n"
        "Gradients are small: in the Underflow lab most activation gradients of the tiny "
        "models lie below 2^-14 and many below 2^-24, where fp16 rounds them to 0. Multiplying "
        "the loss by S multiplies every gradient by S (chain rule) and shifts them into fp16's "
        "range; GradScaler divides them by S again, in fp32, before the optimizer step, so the "
        "update is unchanged. 2^16 = 65536 is PyTorch's default first guess, deliberately "
        "large. When a gradient overflows to inf or NaN, that optimizer step is skipped and S "
        "is halved; after `growth_interval` steps (2000 by default) without overflow S is "
        "doubled. So S settles just below the largest value that does not overflow. S is a "
        "power of two, so scaling and unscaling only change the exponent: they are exact."
    ),
    "why_speed": (
        "### Why fp16 is fast on a GPU and slow on most CPUs\n"
        "A GPU's tensor cores (NVIDIA Volta and newer) multiply fp16 matrices many times "
        "faster than fp32, and half the bytes means half the memory traffic: Hugging Face "
        "reports 2.1× the samples per second with `fp16=True` on a V100. Most CPUs have no "
        "fp16 matrix instructions: PyTorch converts to fp32 and back or uses slow fallback "
        "kernels, so fp16 autocast can be several times *slower* than fp32 (on one of our "
        "development machines a 2048×256 by 256×1024 matmul took 6.5 ms in fp32 and 570 ms "
        "in fp16). Some recent server CPUs (AVX512-FP16, AMX-FP16) do have fast fp16 "
        "matmuls; the app measures this CPU before an fp16 run and tells you. Many CPUs have "
        "bf16 instructions (AVX512-BF16, AMX), so on a CPU bf16 is usually the mixed "
        "precision that pays."
    ),
    "why_bf16": (
        "### Why bf16 needs no scaler\n"
        "bf16 keeps fp32's 8 exponent bits, so it has fp32's range: its smallest normal is "
        "about 1.2e-38 and its largest about 3.4e38. The gradients that fp16 flushes to zero "
        "fit easily, and none overflow: there is nothing for a scaler to fix. The price is "
        "precision: 7 mantissa bits (epsilon 2^-7 ≈ 0.008) against fp16's 10 (2^-10 ≈ "
        "0.001). bf16 needs an Ampere or newer GPU, or a CPU."
    ),
    "why_presets_title": (
        "### Presets for the class\n"
        "Ready comparisons: choose one to load its settings into the Train tab."
    ),
    "preset_label": "Preset",
    "preset_none": "Choose a preset to see what it sets up.",
    "preset_sets": "**Settings:** {settings}",
    "preset_runs": "**Runs:** {runs}",
    "preset_fp16_vs_fp32_gpu": "fp16 vs fp32 on GPU",
    "preset_fp16_vs_fp32_gpu_desc": (
        "small-bert, batch 64, fp32 next to fp16 with loss scaling on a CUDA GPU: the speed-up "
        "of tensor cores (aim: 2× or more) and the same loss curve. Needs a GPU."
    ),
    "preset_bf16_cpu": "bf16 on CPU",
    "preset_bf16_cpu_desc": (
        "small-bert on the CPU, fp32 next to bf16: bf16 is the CPU's fast mixed precision, "
        "with no loss scaler and nearly the same loss."
    ),
    "preset_underflow_no_scaling": "underflow without loss scaling",
    "preset_underflow_no_scaling_desc": (
        "tiny-bert in fp16 twice: with loss scaling off, then on, with fp32 as the "
        "reference. Without scaling the small gradients flush to zero (see the Underflow "
        "lab) and learning lags or stalls."
    ),
    "preset_scale_moves": "watch the scale move",
    "preset_scale_moves_desc": (
        "tiny-bert in fp16 with a growth interval of 10 steps instead of 2000: the loss "
        "scale doubles every 10 clean steps and halves (with a skipped step) at each "
        "overflow. Watch the loss-scale plot."
    ),
}

TEACH_ES: dict[str, str] = {
    "tab_formats": "Formatos numéricos",
    "tab_underflow": "Laboratorio de underflow",
    "tab_code": "Código",
    "tab_why": "Por qué",
    "nf_intro": (
        "### Cómo guardan un número fp32, fp16 y bf16\n"
        "Escribe un número y mira los bits que conserva cada formato: **signo**, **exponente** "
        "(el rango) y **mantisa** (la precisión). El valor guardado es lo que el formato puede "
        "representar de verdad; el error es cuánto se aleja de lo que escribiste."
    ),
    "nf_value_label": "Número",
    "nf_value_info": "notación decimal o científica: 0.1, 1e-8, 65504, 70000, inf",
    "nf_legend": "signo · exponente · mantisa",
    "nf_col_format": "formato",
    "nf_col_bits": "bits (signo · exponente · mantisa)",
    "nf_col_stored": "valor guardado",
    "nf_col_abs_err": "error absoluto",
    "nf_col_rel_err": "error relativo",
    "nf_col_class": "clase",
    "nf_cat_zero": "cero",
    "nf_cat_subnormal": "subnormal",
    "nf_cat_normal": "normal",
    "nf_cat_inf": "infinito",
    "nf_cat_nan": "no es un número (NaN)",
    "nf_overflowed": "overflow: demasiado grande, se volvió infinito",
    "nf_underflowed": "underflow: demasiado pequeño, se volvió 0",
    "nf_bad_input": (
        "No es un número: usa notación decimal o científica, p. ej. 0.1, -2.5e-8, 65504, inf o nan."
    ),
    "nf_table_label": "Rango y precisión de cada formato (calculados con torch.finfo)",
    "nf_th_format": "formato",
    "nf_th_bits": "bits en total",
    "nf_th_exp_bits": "bits de exponente",
    "nf_th_man_bits": "bits de mantisa",
    "nf_th_max": "valor máximo",
    "nf_th_min_normal": "menor normal",
    "nf_th_min_subnormal": "menor subnormal",
    "nf_th_eps": "épsilon de máquina",
    "nf_scale_title": (
        "### Escalado de la pérdida, número a número\n"
        "Un gradiente de 1e-8 está por debajo del menor subnormal de fp16 (2^-24 ≈ 6e-8): "
        "guardado en fp16 se vuelve 0. Si antes se multiplica por una escala de pérdida S, "
        "sobrevive; si se multiplica demasiado, pasa de 65504 y se vuelve infinito. Mueve el "
        "control deslizante."
    ),
    "nf_small_label": "Valor pequeño (un gradiente)",
    "nf_scale_label": "Escala de pérdida S = 2^k: elige k",
    "nf_scale_info": "GradScaler empieza en 2^16 = 65536",
    "nf_sc_value": "valor x",
    "nf_sc_scale": "escala de pérdida S",
    "nf_sc_scaled": "x × S (exacto)",
    "nf_sc_fp16": "x × S guardado en fp16",
    "nf_sc_recovered": "de vuelta a fp32: ÷ S",
    "nf_sc_rel_err": "error relativo tras el viaje de ida y vuelta",
    "nf_sc_bf16": "x guardado en bf16 (sin escalar)",
    "nf_v_zero": "**Se vuelve cero**: en fp16 este gradiente se pierde. Sube S.",
    "nf_v_subnormal": (
        "**Sobrevive como subnormal**: no es cero, pero aquí fp16 conserva menos bits "
        "significativos (error relativo {err})."
    ),
    "nf_v_normal": "**Sobrevive** como número normal de fp16 (error relativo {err}).",
    "nf_v_inf": (
        "**Overflow**: x × S pasó de 65504 y se volvió infinito. GradScaler omitiría este "
        "paso y reduciría S a la mitad."
    ),
    "nf_v_nan": "**NaN**: no es un número en ningún formato.",
    "nf_window_zero": "se vuelve cero hasta S = 2^{k}",
    "nf_window_sub": "subnormal para S de 2^{a} a 2^{b}",
    "nf_window_normal": "número normal de fp16 para S de 2^{a} a 2^{b}",
    "nf_window_inf": "desborda (overflow) desde S = 2^{k}",
    "nf_window": "Para x = {x} (S de 2^0 a 2^{kmax}): {parts}.",
    "uf_intro": (
        "### Laboratorio de underflow: los gradientes de tu modelo frente al rango de fp16\n"
        "Una pasada real hacia delante y hacia atrás en fp32 con el primer lote de "
        "entrenamiento del modelo elegido. Los histogramas muestran dónde caen las magnitudes "
        "de los gradientes (escala log2) y las bandas de color, qué haría fp16 con ellas: los "
        "valores por debajo de 2^-24 **se vuelven cero** (underflow), los que están entre "
        "2^-24 y 2^-14 son **subnormales** (pierden precisión) y los mayores que 65504 "
        "**desbordan** (overflow). Multiplicar la pérdida por S multiplica cada gradiente por "
        "S y desplaza el histograma a la derecha. Es la figura de Micikevicius et al. (2018), "
        "reconstruida con tu modelo."
    ),
    "uf_model_label": "Modelo",
    "uf_batch_label": "Tamaño de lote",
    "uf_seed_label": "Semilla",
    "uf_run_btn": "Calcular gradientes",
    "uf_scale_label": "Escala de pérdida S = 2^k: elige k",
    "uf_scale_info": "de 1 a 2^24; GradScaler empieza en 2^16",
    "uf_status_idle": (
        "Pulsa **Calcular gradientes**: una pasada hacia atrás, unos segundos con los modelos "
        "pequeños (amp-mlp, de 50 M de parámetros, tarda más)."
    ),
    "uf_status": (
        "**{model}**: {params} parámetros, un lote de {batch}, pérdida en fp32 {loss}. "
        "Gradientes de activación: el gradiente de la salida de cada una de las {layers} capas "
        "Linear."
    ),
    "uf_chart_activation": "Gradientes de activación",
    "uf_chart_weight": "Gradientes de los pesos",
    "uf_axis_x": "log2 |gradiente × S|",
    "uf_axis_y": "fracción de los valores no nulos",
    "uf_band_zero": "se vuelve 0",
    "uf_band_sub": "subnormal",
    "uf_band_normal": "fp16 normal",
    "uf_band_over": "overflow",
    "uf_bar_tip": "de 2^{lo} a 2^{hi}: {n} valores ({share})",
    "uf_clamped": "los valores fuera del eje se dibujan en las barras de los extremos",
    "uf_table_label": "Fracción de los gradientes no nulos en fp16",
    "uf_col_kind": "gradientes",
    "uf_col_nonzero": "valores no nulos",
    "uf_col_zero1": "se vuelven cero, S = 1",
    "uf_col_zeroS": "se vuelven cero, S",
    "uf_col_subS": "subnormales, S",
    "uf_col_overS": "overflow, S",
    "uf_kind_activation": "de activación",
    "uf_kind_weight": "de los pesos",
    "uf_reading": (
        "Con S = 2^{k} = {scale}: el **{az}** de los gradientes de activación y el **{wz}** de "
        "los gradientes de los pesos se volverían cero en fp16 (sin escalar: {az1} y {wz1}); "
        "desbordarían el {ao} y el {wo}."
    ),
    "uf_paper": (
        "En el detector SSD del artículo, la mayoría de los gradientes de activación estaban "
        "por debajo del rango de fp16: sin escalado de la pérdida divergía; con S = 8 igualó "
        "a fp32 (77.1 frente a 76.9 mAP). Las fracciones son recuentos exactos: coinciden con "
        "convertir (g × S) a fp16 y contar los ceros."
    ),
    "code_intro": (
        "### El código de cada backend\n"
        "A la izquierda, el script que ejecuta mpdemo con esta configuración (cópialo y "
        "ejecútalo desde el repositorio). A la derecha, el listado del curso. Debajo, lo que "
        "ha tenido que cambiar con las bibliotecas actuales."
    ),
    "code_backend_label": "Backend",
    "code_precision_label": "Precisión",
    "code_model_label": "Modelo",
    "code_steps_label": "Pasos",
    "code_batch_label": "Tamaño de lote",
    "code_scaling_label": "Escalado de la pérdida (fp16)",
    "code_growth_label": "Intervalo de crecimiento",
    "code_ours_label": "Lo que ejecuta mpdemo (esta configuración)",
    "code_course_label": "El listado del curso",
    "code_changes_title": "Qué ha cambiado con las bibliotecas actuales",
    "code_bad_settings": "Esta configuración no es válida: {error}",
    "code_change_torch_0": (
        "torch.cuda.amp.GradScaler() → torch.amp.GradScaler(device_type): una sola API para "
        "GPU y CPU"
    ),
    "code_change_torch_1": (
        "enabled=(precision == 'fp16'): fp32 y bf16 ejecutan el mismo bucle con un escalador "
        "que no hace nada"
    ),
    "code_change_torch_2": (
        "device_type sale del dispositivo del modelo, no de un 'cpu' escrito a mano"
    ),
    "code_change_torch_3": (
        "en la mayoría de las CPU, autocast en fp16 es varias veces más lento que fp32; bf16 "
        "es la vía rápida de la CPU"
    ),
    "code_change_accelerate_0": (
        "Accelerator(mixed_precision='fp16') en una CPU no da error, pero no aplica autocast: "
        "la ejecución es fp32 sin más (accelerate 1.15)"
    ),
    "code_change_accelerate_1": (
        "GradScalerKwargs fija init_scale y growth_interval del escalador"
    ),
    "code_change_accelerate_2": (
        "accelerator.scaler.get_scale() y accelerator.optimizer_step_was_skipped muestran la escala"
    ),
    "code_change_trainer_0": (
        "evaluation_strategy → eval_strategy (transformers 5 eliminó el nombre antiguo)"
    ),
    "code_change_trainer_1": (
        "TrainingArguments(fp16=True) en una CPU se ejecuta en fp32; bf16=True en una CPU "
        "necesita use_cpu=True"
    ),
    "code_change_trainer_2": (
        "max_steps en lugar de épocas, para que todos los backends entrenen el mismo número de "
        "pasos"
    ),
    "why_autocast": (
        "### Qué cambia autocast\n"
        "Dentro de `torch.autocast(...)`, las operaciones que ganan con menos precisión "
        "(multiplicaciones de matrices, capas lineales, convoluciones) se ejecutan en fp16 o "
        "bf16; las que necesitan rango o precisión (softmax, pérdidas, normalizaciones, "
        "sumas) siguen en fp32. Los pesos siguen en fp32 (la *copia maestra*) y el optimizador "
        "los actualiza en fp32; solo se convierten las copias que entran en cada "
        "multiplicación. La pasada hacia atrás ejecuta cada operación en el tipo que usó su "
        "pasada hacia delante. Fuera del bloque `with` no cambia nada."
    ),
    "why_scale": (
        "### Por qué la escala empieza en 65536 y se mueve\n"
        "Los gradientes son pequeños: en el laboratorio de underflow, la mayoría de los "
        "gradientes de activación de los modelos pequeños están por debajo de 2^-14, y muchos "
        "por debajo de 2^-24, donde fp16 los redondea a 0. Multiplicar la pérdida por S "
        "multiplica cada gradiente por S (regla de la cadena) y los lleva al rango de fp16; "
        "GradScaler vuelve a dividirlos por S, en fp32, antes del paso del optimizador, así "
        "que la actualización no cambia. 2^16 = 65536 es el primer valor por defecto de "
        "PyTorch, grande a propósito. Cuando un gradiente desborda a inf o NaN, ese paso del "
        "optimizador se omite y S se reduce a la mitad; tras `growth_interval` pasos (2000 "
        "por defecto) sin desbordamientos, S se duplica. Así S se asienta justo por debajo "
        "del mayor valor que no desborda. S es una potencia de dos: escalar y desescalar solo "
        "cambian el exponente y son exactos."
    ),
    "why_speed": (
        "### Por qué fp16 es rápido en una GPU y lento en la mayoría de las CPU\n"
        "Los tensor cores de una GPU (NVIDIA Volta y posteriores) multiplican matrices fp16 "
        "muchas veces más rápido que en fp32, y la mitad de bytes es la mitad de tráfico de "
        "memoria: Hugging Face informa de 2,1 veces más muestras por segundo con `fp16=True` "
        "en una V100. La mayoría de las CPU no tienen instrucciones de matrices fp16: PyTorch "
        "convierte a fp32 y vuelve, o usa núcleos de reserva lentos, así que autocast en fp16 "
        "puede ser varias veces *más lento* que fp32 (en una de nuestras máquinas de "
        "desarrollo, un producto de matrices de 2048×256 por 256×1024 tardó 6,5 ms en fp32 y "
        "570 ms en fp16). Algunas CPU de servidor recientes (AVX512-FP16, AMX-FP16) sí tienen "
        "multiplicaciones fp16 rápidas; la aplicación mide esta CPU antes de una ejecución en "
        "fp16 y te lo dice. Muchas CPU tienen instrucciones bf16 (AVX512-BF16, AMX), así que "
        "en una CPU la precisión mixta que compensa suele ser bf16."
    ),
    "why_bf16": (
        "### Por qué bf16 no necesita escalador\n"
        "bf16 conserva los 8 bits de exponente de fp32, así que tiene el rango de fp32: su "
        "menor normal es de unos 1,2e-38 y su máximo de unos 3,4e38. Los gradientes que fp16 "
        "vuelve cero caben sin problema y ninguno desborda: no hay nada que un escalador deba "
        "arreglar. El precio es la precisión: 7 bits de mantisa (épsilon 2^-7 ≈ 0,008) frente "
        "a los 10 de fp16 (2^-10 ≈ 0,001). bf16 necesita una GPU Ampere o más reciente, o una "
        "CPU."
    ),
    "why_presets_title": (
        "### Configuraciones para la clase\n"
        "Comparaciones preparadas: elige una para cargar su configuración en la pestaña "
        "Entrenar."
    ),
    "preset_label": "Configuración preparada",
    "preset_none": "Elige una configuración para ver qué prepara.",
    "preset_sets": "**Ajustes:** {settings}",
    "preset_runs": "**Ejecuciones:** {runs}",
    "preset_fp16_vs_fp32_gpu": "fp16 frente a fp32 en GPU",
    "preset_fp16_vs_fp32_gpu_desc": (
        "small-bert, lote de 64, fp32 junto a fp16 con escalado de la pérdida en una GPU "
        "CUDA: la aceleración de los tensor cores (objetivo: 2 veces o más) y la misma curva "
        "de pérdida. Necesita una GPU."
    ),
    "preset_bf16_cpu": "bf16 en CPU",
    "preset_bf16_cpu_desc": (
        "small-bert en la CPU, fp32 junto a bf16: bf16 es la precisión mixta rápida de la "
        "CPU, sin escalador de pérdida y con casi la misma pérdida."
    ),
    "preset_underflow_no_scaling": "underflow sin escalado de la pérdida",
    "preset_underflow_no_scaling_desc": (
        "tiny-bert en fp16 dos veces: sin escalado de la pérdida y con él, y fp32 como "
        "referencia. Sin escalar, los gradientes pequeños se vuelven cero (mira el laboratorio "
        "de underflow) y el aprendizaje se retrasa o se estanca."
    ),
    "preset_scale_moves": "mira cómo se mueve la escala",
    "preset_scale_moves_desc": (
        "tiny-bert en fp16 con un intervalo de crecimiento de 10 pasos en lugar de 2000: la "
        "escala de pérdida se duplica cada 10 pasos sin problemas y se reduce a la mitad (con "
        "un paso omitido) en cada desbordamiento. Mira la gráfica de la escala de pérdida."
    ),
}
