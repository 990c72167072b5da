#!/usr/bin/env python3
"""The CJK set's questions and their answers, written from reading the
documentation (not from any search): each question with the file(s) that
answer it and, where one section does, the heading that opens it. Writes
queries.jsonl and qrels.tsv (the section's lines found in the fetched
corpus); run `eval/cjk/fetch` first.

    python3 eval/cjk/labels.py
"""
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
Z = "zh/componentData/components/"

# (id, question, [(doc-id, heading text or None for the whole file)])
QUESTIONS = [
    # Chinese: Ant Design's component docs (zh-CN).
    ("zh_q01", "表格只有一页数据的时候怎么把下面的分页器藏起来？", [(Z + "table/docs.md", "如何在没有数据或只有一页数据时隐藏分页栏")]),
    ("zh_q02", "筛选表格数据之后页码为什么自动跳回了第1页", [(Z + "table/docs.md", "表格过滤时会回到第一页？")]),
    ("zh_q03", "数据超过50条时分页栏多了一个每页条数的下拉框，怎么去掉", [(Z + "table/docs.md", "表格分页为何会出现 size 切换器？")]),
    ("zh_q04", "改了一个状态整张表格都重新渲染，能不能只更新部分单元格", [(Z + "table/docs.md", "为什么 更新 state 会导致全表渲染？")]),
    ("zh_q05", "生成的二维码手机扫不出来怎么办", [(Z + "qr-code/docs.md", "⚠️⚠️⚠️ 二维码无法扫描？")]),
    ("zh_q06", "二维码被遮挡一部分还能识别吗？容错级别有哪几种", [(Z + "qr-code/docs.md", "关于二维码纠错等级")]),
    ("zh_q07", "点击按钮时的水波纹动画怎样全局关掉", [(Z + "button/docs.md", "如何关闭点击波纹效果？")]),
    ("zh_q08", "在弹窗里用表单实例，控制台警告实例没有连接到表单", [(Z + "form/docs.md", "为何在 Modal 中调用 form 控制台会报错？")]),
    ("zh_q09", "表单项里给输入框写的默认值没有显示出来", [(Z + "form/docs.md", "为什么 Form.Item 下的子组件 `defaultValue` 不生效？")]),
    ("zh_q10", "开关和复选框放进表单项以后值绑定不上", [(Z + "form/docs.md", "Switch、Checkbox 为什么不能绑定数据？"), (Z + "switch/docs.md", "为什么在 Form.Item 下不能绑定数据？"), (Z + "checkbox/docs.md", "为什么在 Form.Item 下不能绑定数据？")]),
    ("zh_q11", "数字输入框受控时数值超出了最小值和最大值的限制", [(Z + "input-number/docs.md", "为何受控模式下，`value` 可以超出 `min` 和 `max` 范围？")]),
    ("zh_q12", "用鼠标滚轮滚动会改变数字输入框的数值吗，怎么控制", [(Z + "input-number/docs.md", "为何 `changeOnWheel` 无法控制鼠标滚轮是否改变数值？")]),
    ("zh_q13", "动态切换输入框的前缀后缀后输入框失去了焦点", [(Z + "input/docs.md", "为什么我动态改变 `prefix/suffix/showCount` 时，Input 会失去焦点？")]),
    ("zh_q14", "日期选择器怎么设置每周从星期一开始", [(Z + "date-picker/docs.md", "如何修改周的起始日？")]),
    ("zh_q15", "日期组件已经设置了中文语言包，界面却还是英文", [(Z + "date-picker/docs.md", "为什么时间类组件的国际化 locale 设置不生效？"), (Z + "config-provider/docs.md", "为什么时间类组件的国际化 locale 设置不生效？"), (Z + "calendar/docs.md", "为什么时间类组件的国际化 locale 设置不生效？")]),
    ("zh_q16", "用 Vite 打包到生产环境后国际化失效了", [(Z + "config-provider/docs.md", "Vite 生产模式打包后国际化 locale 设置不生效？")]),
    ("zh_q17", "message 的静态方法拿不到主题配置和 redux 里的数据", [(Z + "message/docs.md", "为什么 message 不能获取 context、redux 的内容和 ConfigProvider 的 `locale/prefixCls/theme` 等配置？")]),
    ("zh_q18", "上传文件时想自己实现发送请求的逻辑", [(Z + "upload/docs.md", "`customRequest` 怎么使用？")]),
    ("zh_q19", "上传组件对应的服务端接口应该怎么写", [(Z + "upload/docs.md", "服务端如何实现？")]),
    ("zh_q20", "在 Safari 里选择文件夹上传却还能选中单个文件", [(Z + "upload/docs.md", "文件夹上传在 Safari 仍然可以选中文件?")]),
    ("zh_q21", "树组件异步加载数据时默认展开全部节点不起作用", [(Z + "tree/docs.md", "defaultExpandAll 在异步加载数据时为何不生效？")]),
    ("zh_q22", "树形选择框在 onChange 回调里怎么拿到父节点的信息", [(Z + "tree-select/docs.md", "onChange 时如何获得父节点信息？")]),
    ("zh_q23", "穿梭框两侧的列表数据需要从服务器异步加载", [(Z + "transfer/docs.md", "怎样让 Transfer 穿梭框列表支持异步数据加载")]),
    ("zh_q24", "对话框关闭以后里面的内容没有跟着更新", [(Z + "modal/docs.md", "为什么 Modal 关闭时，内容不会更新？")]),
    ("zh_q25", "水印使用的图片加载失败时会怎么处理", [(Z + "watermark/docs.md", "处理异常图片水印")]),
    ("zh_q26", "固钉绑定了滚动容器之后元素跑到了容器外面", [(Z + "affix/docs.md", "Affix 使用 `target` 绑定容器时，元素会跑到容器外。")]),
    ("zh_q27", "下拉菜单在屏幕右边被挤压变形了怎么办", [(Z + "dropdown/docs.md", "Dropdown 在水平方向超出屏幕时会被挤压该怎么办？")]),
    ("zh_q28", "走马灯的左右切换箭头能换成自己的吗", [(Z + "carousel/docs.md", "如何自定义箭头？")]),
    ("zh_q29", "弹性布局 Flex 和间距 Space 组件有什么区别", [(Z + "flex/docs.md", "与 Space 组件的区别")]),
    ("zh_q30", "图标注入的样式把全局样式搞乱了", [(Z + "icon/docs.md", "为什么有时 icon 注入的样式会引起全局样式异常？")]),
    # Japanese: textlint rules for Japanese prose.
    ("ja_q01", "一つの文で使える読点「、」の数を設定したい", [("ja/max-ten/README.md", "Options"), ("ja/preset-ja-technical-writing/README.md", "読点は1文中に3つまで")]),
    ("ja_q02", "「材料不足で代替素材で」のように同じ助詞が続く文を検出したい", [("ja/no-doubled-joshi/README.md", None), ("ja/preset-ja-technical-writing/README.md", "同じ助詞を連続して使用しない")]),
    ("ja_q03", "文末に「。」を付け忘れているのを見つけるルールはある？", [("ja/ja-no-mixed-period/README.md", None), ("ja/preset-ja-technical-writing/README.md", "文末の句点記号として「。」を使います")]),
    ("ja_q04", "です・ます調とである調が混ざっていないかをチェックしたい", [("ja/no-mix-dearu-desumasu/README.md", None), ("ja/preset-ja-technical-writing/README.md", "「ですます調」、「である調」を統一します")]),
    ("ja_q05", "「食べれる」のようなら抜き言葉を指摘してほしい", [("ja/no-dropping-the-ra/README.md", None), ("ja/preset-ja-technical-writing/README.md", "ら抜き言葉を使用しない")]),
    ("ja_q06", "「適応」と「適用」の使い間違いを見つけたい", [("ja/ja-no-abusage/README.md", None)]),
    ("ja_q07", "「調査を行う」のような冗長な言い回しを禁止したい", [("ja/ja-no-redundant-expression/README.md", None)]),
    ("ja_q08", "漢字が何文字も続くと読みにくいので上限を決めたい", [("ja/max-kanji-continuous-len/README.md", None), ("ja/preset-ja-technical-writing/README.md", "連続できる最大の漢字長は6文字まで")]),
    ("ja_q09", "半角カタカナを全角に自動で直せますか", [("ja/no-hankaku-kana/README.md", None)]),
    ("ja_q10", "IMEの変換ミスで日本語の中に英字が紛れ込んだタイポを検出する", [("ja/ja-unnatural-alphabet/README.md", None)]),
    ("ja_q11", "「かもしれない」「と思います」のような自信のない言い方を禁止したい", [("ja/ja-no-weak-phrase/README.md", None)]),
    ("ja_q12", "同じ単語を二回続けて入力してしまったミスを見つけたい", [("ja/ja-no-successive-word/README.md", None)]),
    ("ja_q13", "「しかし」が続けて二つの文で使われているのを警告してほしい", [("ja/no-doubled-conjunction/README.md", None), ("ja/preset-ja-technical-writing/README.md", "同じ接続詞を連続して使用しない")]),
    ("ja_q14", "一つの文に逆接の「が」が何度も出てくるのを検出したい", [("ja/no-doubled-conjunctive-particle-ga/README.md", None), ("ja/preset-ja-technical-writing/README.md", "逆接の接続助詞「が」を連続して使用しない")]),
    ("ja_q15", "「事」や「時」などの形式名詞をひらがなで書くよう指摘してほしい", [("ja/ja-hiragana-keishikimeishi/README.md", None)]),
    ("ja_q16", "日本語と英数字の間にスペースを入れるかどうかを決めるルール集", [("ja/preset-ja-spacing/README.md", None)]),
    ("ja_q17", "JTFスタイルの特定のルールだけを無効にするには設定ファイルをどう書く？", [("ja/preset-jtf-style/README.md", "FAQ")]),
    ("ja_q18", "JTFスタイルで既定では無効になっている辞書ベースのルールを有効にしたい", [("ja/preset-jtf-style/README.md", "FAQ")]),
    ("ja_q19", "技術文書向けプリセットで一文の最大文字数を120文字に変更する設定", [("ja/preset-ja-technical-writing/README.md", "ルールの設定方法"), ("ja/preset-ja-technical-writing/README.md", "1文の長さは100文字以下とする")]),
    ("ja_q20", "AIが書いたような大げさな誇張表現を検出するルール", [("ja/preset-ai-writing/README.md", "no-ai-hype-expressions")]),
    ("ja_q21", "textlintをMCPサーバとして起動してClaude Codeから使う方法", [("ja/preset-ai-writing/README.md", "MCPサーバとしての利用")]),
    ("ja_q22", "見出しを太字で強調するようなAIっぽい書き方を指摘したい", [("ja/preset-ai-writing/README.md", "no-ai-emphasis-patterns")]),
    ("ja_q23", "文章で感嘆符や疑問符を使わないようにしたい", [("ja/preset-ja-technical-writing/README.md", "感嘆符!！、疑問符?？を使用しない")]),
    ("ja_q24", "JTFスタイルのエラーをコマンドで自動修正したい", [("ja/preset-jtf-style/README.md", "自動修正")]),
]

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*(\{#[^}]*\})?\s*$")


def section(path: pathlib.Path, title: str) -> str:
    """`start-end` of the section `title` opens: to the line before the next
    heading of its level or above."""
    lines = path.read_text(encoding="utf-8").splitlines()
    fence = False
    heads = []
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        m = None if fence else HEADING.match(line)
        if m:
            heads.append((n, len(m.group(1)), m.group(2).strip()))
    for i, (n, level, text) in enumerate(heads):
        if text == title.strip():
            end = len(lines)
            for m, lv, _ in heads[i + 1:]:
                if lv <= level:
                    end = m - 1
                    break
            return f"{n}-{end}"
    sys.exit(f"labels: no heading {title!r} in {path}")


def main() -> None:
    if not CORPUS.is_dir():
        sys.exit("labels: run eval/cjk/fetch first")
    with open(HERE / "queries.jsonl", "w", encoding="utf-8") as q, open(
        HERE / "qrels.tsv", "w", encoding="utf-8"
    ) as r:
        r.write("query-id\tdoc-id\trelevance\tlines\n")
        for qid, text, answers in QUESTIONS:
            q.write(json.dumps({"id": qid, "text": text}, ensure_ascii=False) + "\n")
            seen = {}
            for doc, title in answers:
                path = CORPUS / doc
                if not path.is_file():
                    sys.exit(f"labels: {qid}: no file {doc}")
                lines = "" if title is None else section(path, title)
                if doc in seen:
                    # Two sections of one file: one label, the wider range.
                    a, b = seen[doc].split("-"), lines.split("-")
                    lines = f"{min(int(a[0]), int(b[0]))}-{max(int(a[1]), int(b[1]))}"
                seen[doc] = lines
            for doc, lines in seen.items():
                # cairn eval names a markdown file without its `.md`.
                r.write(f"{qid}\t{doc.removesuffix('.md')}\t1\t{lines}\n")


if __name__ == "__main__":
    main()
